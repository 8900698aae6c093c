"""``aqe_core.api`` is the one documented import (issue 26): it hands out the very objects of the
layers, every name it lists exists, importing it starts no Spark, and the old facades and rule
shims it replaced are gone. Its docstring's example runs in tests/test_doctests.py."""
from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_api_hands_out_the_layers_objects():
    from aqe_core import api
    from aqe_core.engine import simulate
    from aqe_core.figures.plan_figure import plan_figure
    from aqe_core.opening import load_source
    from aqe_core.readers.capture_file import load_capture
    from aqe_core.readers.eventlog.loader import load
    from aqe_core.views.compare import whatif

    assert api.load_event_log is load and api.load_capture is load_capture and api.simulate is simulate
    assert api.load_source is load_source and api.whatif is whatif and api.plan_figure is plan_figure


def test_every_listed_name_exists():
    from aqe_core import api

    assert len(set(api.__all__)) == len(api.__all__)
    assert [n for n in api.__all__ if n not in ("Runner", "get_runtime", "capture_queries")
            and getattr(api, n, None) is None] == []


def test_importing_the_api_starts_no_spark():
    code = ("import sys, aqe_core.api; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j') or m.startswith('aqe_core.live')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("old", ["aqe_core.capture", "aqe_core.eventlog", "aqe_core.plan_graph",
                                 "aqe_core.rules.skew_join", "aqe_core.rules.shuffle_partitions",
                                 "aqe_core.rules.specs", "aqe_core.sources", "aqe_core.engine.lines",
                                 "aqe_core.readers.eventlog.sources", "aqe_core.readers.eventlog.lines",
                                 "aqe_core.readers.eventlog.listener", "aqe_core.model.spill",
                                 "aqe_core.model.packed"])
def test_old_paths_are_gone(old):
    """One name, one meaning: the old paths are not kept alive beside the new ones."""
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)
