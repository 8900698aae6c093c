"""AQE Lens engine: Spark Adaptive Query Execution rules, sources and reports.

No Streamlit import anywhere in this package: the app, the CLI and notebooks all use it.
"""
__version__ = "0.1.0"
