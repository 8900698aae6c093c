"""Event logs written with the AQE Lens listener are exact sources (issue 11).

Recorded with ``tools/record_listener_logs.py`` on every supported release (``advise.releases.RELEASES``:
PySpark 3.0.1 to 4.3.0, 4.1.4 and 4.2.1 included): one application per release that ran every built-in workload with the listener and event logging
on, and the Python recorder's captures of the same queries (the truth). For each release the
log must replay through our rules with 100% agreement, every listener execution must be shown
like a capture (exact, no approximate label), its statistics must equal the recorder's, and
``simulate`` must accept the log and exit 0.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from aqe_core.cli import main as cli_main
from aqe_core.engine.simulate import simulate
from aqe_core.readers.capture_file import load_capture
from aqe_core.opening import SourceError, load_exact, load_source

DIR = Path(__file__).parents[1] / "fixtures" / "eventlogs" / "listener"
COMPARED = ("final_plan", "stages", "shuffles", "reads", "required_distribution", "adaptive", "default_parallelism")


def _logs():
    out = []
    for vdir in sorted(DIR.glob("*")) if DIR.is_dir() else []:
        logs = [p for p in vdir.iterdir() if not p.name.startswith("captures")]
        if logs:
            out.append(pytest.param(vdir.name, logs[0], vdir / "captures.json.gz", id=vdir.name))
    return out


LOGS = _logs()


def test_every_release_has_a_listener_log():
    from aqe_core.advise.releases import RELEASES

    assert {p.values[0] for p in LOGS} >= set(RELEASES)


@pytest.mark.parametrize("version,log,truth", LOGS)
def test_listener_log_replays_exactly(version, log, truth):
    cap = load_exact(str(log))
    assert cap.spark_version == version
    rep = simulate(cap)
    a = rep.agreement
    assert rep.is_replay and a.complete, a.summary() + "\n" + "\n".join(a.mismatches + a.undecided)
    assert a.total >= 20 and a.joins_total >= 10


@pytest.mark.parametrize("version,log,truth", LOGS)
def test_listener_statistics_equal_the_recorders(version, log, truth):
    ours = {q.execution_ids[0]: q for q in load_exact(str(log)).queries}
    recorded = [q for q in load_capture(truth).queries if q.adaptive]
    assert recorded
    for q in recorded:
        eid = next((e for e in q.execution_ids if e in ours), None)
        assert eid is not None, f"{q.label}: no listener event for executions {q.execution_ids}"
        mine, theirs = ours[eid].to_dict(), q.to_dict()
        for key in COMPARED:
            assert mine[key] == theirs[key], f"{q.label}: {key} differs"
        assert set(theirs["conf"].items()) <= set(mine["conf"].items())
        assert mine["initial_plan"] is not None and mine["plan_updates"]


@pytest.mark.parametrize("version,log,truth", LOGS)
def test_listener_executions_are_shown_like_captures(version, log, truth):
    src = load_source(str(log))
    exact = [v for v in src.views if v.source_kind == "capture"]
    assert exact and "listener" in src.label and "agree" in src.label
    for v in exact:
        assert v.model is not None and v.shuffles is not None
    assert cli_main(["simulate", str(log)]) == 0


def test_a_plain_log_is_not_simulated(capsys):
    import json

    samples = Path(__file__).parents[2] / "sample_logs" / "eventlogs"
    plain = samples / json.loads((samples / "MANIFEST.json").read_text())["spark359_zstd"]["files"][0]
    with pytest.raises(SourceError, match="no AQE Lens listener events"):
        load_exact(str(plain))
    assert cli_main(["simulate", str(plain)]) == 2
    assert "listener" in capsys.readouterr().err
