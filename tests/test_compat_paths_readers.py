"""The old import paths of the capture model, the event-log reader and the plan graphs keep
working after issue 9 moved them, and hand out the very same objects as the new paths."""
from __future__ import annotations

import importlib

import pytest

SWAPPED = {
    "aqe_core.eventlog.codecs": "aqe_core.readers.eventlog.codecs",
    "aqe_core.eventlog.errors": "aqe_core.readers.eventlog.errors",
    "aqe_core.eventlog.sources": "aqe_core.readers.eventlog.sources",
    "aqe_core.eventlog.metrics": "aqe_core.readers.eventlog.metrics",
    "aqe_core.eventlog.planinfo": "aqe_core.readers.eventlog.planinfo",
    "aqe_core.eventlog.model": "aqe_core.model.eventlog",
    "aqe_core.eventlog.summary": "aqe_core.views.eventlog_summary",
    "aqe_core.plan_graph.diff": "aqe_core.views.plan_diff",
    "aqe_core.plan_graph.layout": "aqe_core.figures.plan_layout",
    "aqe_core.plan_graph.figure": "aqe_core.figures.plan_figure",
    "aqe_core.plan_graph.synthetic": "aqe_core.figures.synthetic",
}


@pytest.mark.parametrize("old", sorted(SWAPPED))
def test_old_module_is_the_new_module(old):
    assert importlib.import_module(old) is importlib.import_module(SWAPPED[old])


def test_split_modules_reexport_their_names():
    from aqe_core.capture import model as old_capture
    from aqe_core.eventlog import reader as old_reader
    from aqe_core.model import capture
    from aqe_core.readers import capture_file
    from aqe_core.readers.eventlog import lines, loader

    assert old_capture.Capture is capture.Capture and old_capture.QueryCapture is capture.QueryCapture
    assert old_capture.load_capture is capture_file.load_capture and old_capture.dumps is capture_file.dumps
    assert old_capture.CaptureFormatError is capture.CaptureFormatError
    assert old_capture.FORMAT_VERSION == capture.FORMAT_VERSION == 1
    assert old_capture.DEFAULT_MAX_CAPTURE_BYTES == capture_file.DEFAULT_MAX_CAPTURE_BYTES
    assert old_reader.load is loader.load and old_reader._Prepend is loader._Prepend
    assert old_reader.parse_task_end_fast is lines.parse_task_end_fast
    assert old_reader.SQL_PREFIX == "org.apache.spark.sql.execution.ui."


def test_facades_keep_their_names():
    import aqe_core.eventlog as facade
    import aqe_core.plan_graph as plan_graph

    for name in facade.__all__:
        assert hasattr(facade, name), name
    for name in plan_graph.__all__:
        assert hasattr(plan_graph, name), name
