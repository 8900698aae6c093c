"""Live Spark as a source: Java discovery, the shared SparkSession, the recorder that captures
what AQE saw, the run queue and the guards on strangers' SQL and settings. Produces the same
model a capture file or an event log does."""
