"""tools/scale_executions.py on a real sample log: N executions, every id once, times in order,
and the result opens with N views."""
from __future__ import annotations

import collections
import importlib.util
import json
import sys
from pathlib import Path

import pytest

from aqe_core.opening import load_source

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs" / "eventlogs"
_spec = importlib.util.spec_from_file_location("scale_executions", ROOT / "tools" / "scale_executions.py")
se = sys.modules.setdefault("scale_executions", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(se)  # type: ignore[union-attr]


def _source() -> Path:
    manifest = json.loads((SAMPLES / "MANIFEST.json").read_text())
    return SAMPLES / manifest["spark430_lz4"]["files"][0]  # real Spark 4.3.0, lz4: the reader decodes it


def _ids(path: Path) -> dict[str, collections.Counter]:
    ids: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    acc_exec: dict[int, set] = collections.defaultdict(set)
    with open(path, "rb") as f:
        for line in f:
            e = json.loads(line)
            ev = e["Event"]
            if ev.endswith("SQLExecutionStart"):
                ids["execution"][e["executionId"]] += 1
                stack = [e["sparkPlanInfo"]]
                while stack:
                    node = stack.pop()
                    for m in node.get("metrics", []):
                        acc_exec[m["accumulatorId"]].add(e["executionId"])
                    stack.extend(node.get("children", []))
            elif ev == "SparkListenerJobStart":
                ids["job"][e["Job ID"]] += 1
            elif ev == "SparkListenerStageSubmitted":
                ids["stage"][(e["Stage Info"]["Stage ID"], e["Stage Info"]["Stage Attempt ID"])] += 1
            elif ev == "SparkListenerTaskEnd":
                ids["task"][e["Task Info"]["Task ID"]] += 1
    ids["accumulator executions"] = collections.Counter({a: len(x) for a, x in acc_exec.items()})
    return ids


@pytest.fixture(scope="module")
def source_executions() -> int:
    return len(se.plan(se.source_lines(str(_source())))["starts"])


@pytest.mark.parametrize("copies_and_rest", [(3, 0), (2, 3)], ids=["whole copies", "a partial last copy"])
def test_scaled_log_has_n_executions_with_unique_ids(tmp_path, source_executions, copies_and_rest):
    copies, rest = copies_and_rest
    n = copies * source_executions + rest
    out = tmp_path / "scaled"
    info = se.write(str(_source()), str(out), n, progress=False)
    assert info["executions"] == n
    ids = _ids(out)
    assert len(ids["execution"]) == n
    for kind, counts in ids.items():
        assert max(counts.values()) == 1, f"{kind} ids repeated: {[k for k, c in counts.items() if c > 1][:5]}"
    assert sorted(ids["execution"]) == list(range(n))  # the source's ids 0..k-1, then the next copy's
    src = load_source(str(out))
    assert len(src.views) == n
    assert not src.incomplete


def test_times_move_on_per_copy(tmp_path, source_executions):
    out = tmp_path / "scaled"
    se.write(str(_source()), str(out), 3 * source_executions, progress=False)
    starts, app_end = [], None
    with open(out, "rb") as f:
        for line in f:
            e = json.loads(line)
            if e["Event"].endswith("SQLExecutionStart"):
                starts.append(e["time"])
            elif e["Event"] == "SparkListenerApplicationEnd":
                app_end = e["Timestamp"]
    k = source_executions
    assert starts[k] > starts[k - 1] and starts[2 * k] > starts[2 * k - 1]  # each copy after the one before
    assert starts[k] - starts[0] == starts[2 * k] - starts[k]
    assert app_end is not None and app_end > starts[-1]


def test_the_application_events_are_written_once(tmp_path, source_executions):
    out = tmp_path / "scaled"
    se.write(str(_source()), str(out), 2 * source_executions + 1, progress=False)
    names = collections.Counter(json.loads(line)["Event"] for line in open(out, "rb"))
    for once in ("SparkListenerApplicationStart", "SparkListenerApplicationEnd", "SparkListenerEnvironmentUpdate",
                 "SparkListenerExecutorAdded", "SparkListenerBlockManagerAdded"):
        assert names.get(once, 0) <= 1, once
