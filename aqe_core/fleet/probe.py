"""What a Spark executor's Python lacks to read logs. Standard library only: the probe must
arrive in a Python without the project's packages and say so (see
:func:`aqe_core.fleet.scan.check_executor_python`)."""
from __future__ import annotations

import importlib
import sys
from typing import Any

#: what the executors import to read a log: the module of the scan's tasks (unpickling a task
#: imports it), the reader, and its codecs and arrays (requirements.txt)
EXECUTOR_MODULES = ("aqe_core.fleet.scan", "aqe_core.fleet.rows", "zstandard", "lz4.block", "cramjam", "xxhash",
                    "orjson", "msgspec", "numpy")


def missing_modules(_: Any = None) -> tuple[str, tuple[str, ...]]:
    """(this Python, the top-level modules it cannot import)."""
    missing = set()
    for name in EXECUTOR_MODULES:
        try:
            importlib.import_module(name)
        except ImportError as e:
            missing.add((e.name or name).split(".")[0])
    return sys.executable, tuple(sorted(missing))
