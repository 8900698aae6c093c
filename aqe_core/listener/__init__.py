"""The AQE Lens listener: a jar that makes any Spark job's own event log exact for AQE Lens.

Built from ``listener/src`` by ``tools/build_listener.sh`` and shipped here, so no JDK is needed
to use it. :func:`spark_conf` gives the settings that add it to a job (a SparkSession builder,
``spark-submit --conf``, ``spark-defaults.conf``); docs/listener.md shows other set-ups.
"""
from __future__ import annotations

from pathlib import Path

JAR_PATH = Path(__file__).resolve().parent / "aqe-lens-listener.jar"
LISTENER_CLASS = "io.aqelens.listener.AqeLensListener"
EVENT_CLASS = "io.aqelens.listener.AqeLensQueryEvent"


def spark_conf(jar: "Path | str" = JAR_PATH) -> dict[str, str]:
    """``spark.jars`` (the jar, shipped to the driver's classpath before it starts) and
    ``spark.extraListeners``. Event logging stays the job's own choice: without it the listener
    writes a side file (``spark.aqelens.sideFile.dir``)."""
    return {"spark.jars": str(jar), "spark.extraListeners": LISTENER_CLASS}
