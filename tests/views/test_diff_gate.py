"""Issue 39, requirement 4: a gate that means something. A regression needs a relative and an
absolute threshold (a 227 -> 255 ms query is noise; the issue's `--threshold 10` failed CI on it),
commands are not regressions by default (`createOrReplaceTempView` 9 -> 18 ms failed the same
job run twice), and every failure names the application, the query (id and description) and the
measure. Commands are told from the real 4.3.0 sample log's own plans (its queries 0 and 1 are
createOrReplaceTempView)."""
from __future__ import annotations

import dataclasses
import json

from aqe_core.cli import main
from aqe_core.model.run_diff import Gate
from aqe_core.opening import default_sample, load_source
from aqe_core.views.answers import diff_entry
from aqe_core.views.diff_runs import diff_views


def _diff():
    src = load_source(default_sample().path)
    return diff_views(src.views, src.views, app=(src.app_name or "", src.app_name or "")), src


def _slower(q, a_ms, b_ms):
    return dataclasses.replace(q, duration_ms=(a_ms, b_ms))


def test_commands_are_told_from_the_plans():
    d, src = _diff()
    by_id = {v.query_id: v for v in src.views}
    commands = {q.b.query_id for q in d.matched if q.command}
    assert commands >= {"0", "1"}
    for q in d.matched:  # a command is what InsertAdaptiveSparkPlan calls one, and nothing else
        assert q.command == ("command" in by_id[q.b.query_id].adaptive_reason), (q.b.query_id, q.b.description)


def test_a_regression_needs_both_thresholds_and_commands_are_left_out():
    d, _ = _diff()
    query = next(q for q in d.matched if not q.command)
    command = next(q for q in d.matched if q.command)
    d.matched = [_slower(query, 227, 255), _slower(command, 9, 18)]
    assert d.regressions(Gate()) == []  # +12% but +28 ms; a command
    assert [q.b.query_id for q in d.regressions(Gate(10, 20))] == [query.b.query_id]
    assert len(d.regressions(Gate(10, 5, commands=True))) == 2
    d.matched = [_slower(query, 10_000, 12_500)]
    [q] = d.regressions(Gate())
    line = Gate().failure(q, d.app[1])
    assert line.startswith(f"{d.app[1]}: query #{query.b.query_id} ({query.b.description[:80]})")
    assert "10000 ms -> 12500 ms (+25%, +2500 ms): over 10% and 1000 ms" in line
    doc = diff_entry(d, Gate())
    assert doc["regressed"] == [query.b.query_id] and doc["failures"] == [line] and doc["min_ms"] == 1000
    assert doc["b"]["app"] == d.app[1] != ""


def test_the_same_job_twice_passes_the_default_gate(capsys):
    path = default_sample().path
    assert main(["diff", path, path, "--json", "--threshold", "0"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["regressed"] == [] and doc["failures"] == [] and doc["commands"] is False


def test_a_bad_min_ms_is_refused(capsys):
    import pytest

    path = default_sample().path
    with pytest.raises(SystemExit) as exc:
        main(["diff", path, path, "--min-ms", "soon"])
    assert exc.value.code == 2 and "expected whole milliseconds" in capsys.readouterr().err
