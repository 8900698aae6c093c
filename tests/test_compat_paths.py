"""The import paths users were given before issue 9 keep working: the rule engine's public API
(named in that issue) and the documented facades, handing out the very same objects."""
from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize("old, new, names", [
    ("aqe_core.rules.shuffle_partitions", "aqe_core.rules.shuffle_partitions_util",
     ["coalesce_partitions", "split_size_list_by_target_size", "create_skew_partition_specs"]),
    ("aqe_core.rules.skew_join", "aqe_core.rules.optimize_skewed_join", ["analyze_side", "optimize_skewed_join"]),
    ("aqe_core.rules.specs", "aqe_core.model.specs",
     ["CoalescedPartitionSpec", "PartialReducerPartitionSpec", "PartialMapperPartitionSpec", "spec_to_dict"]),
])
def test_rule_engine_paths(old, new, names):
    for name in names:
        assert getattr(importlib.import_module(old), name) is getattr(importlib.import_module(new), name)


def test_documented_facades():
    import aqe_core.capture as capture
    import aqe_core.eventlog as eventlog
    import aqe_core.plan_graph as plan_graph
    from aqe_core.engine import simulate
    from aqe_core.figures.plan_figure import plan_figure
    from aqe_core.readers.capture_file import load_capture
    from aqe_core.readers.eventlog.loader import load

    assert capture.simulate is simulate and capture.load_capture is load_capture
    assert eventlog.load is load and plan_graph.plan_figure is plan_figure
    for facade in (capture, eventlog, plan_graph):
        for name in facade.__all__:
            if facade is capture and name in ("Runner", "get_runtime", "capture_queries"):
                continue  # lazy: would start importing PySpark
            assert getattr(facade, name) is not None
