"""What-if lines checked against real runs (issue 12): a capture's query seen under another
preset's settings must draw the same median, skew threshold and targets as the query Spark ran
under that preset (for every shuffle whose statistics are the same in both runs)."""
from __future__ import annotations

from pathlib import Path

import pytest

from aqe_core.readers.capture_file import load_capture
from aqe_core.views.compare import whatif
from aqe_core.views.from_capture import views_from_capture

FIXTURES = Path(__file__).parents[1] / "fixtures" / "captures"
PLAN_CHANGING = {"force"}


def _cases():
    out = []
    for version in ("3.5.9", "4.3.0"):
        for path in sorted((FIXTURES / version).glob("*.json.gz")):
            cap = load_capture(path)
            names = [q.preset for q in cap.queries if q.preset not in PLAN_CHANGING]
            out += [pytest.param(path, a, b, id=f"{version}/{path.name.split('.')[0]}:{a}->{b}")
                    for a in names for b in names if a != b]
    return out


def _stats(cap, q, stage_id):
    st = q.stage(stage_id)
    sh = q.shuffle(st.shuffle_id) if st else None
    return None if sh is None or sh.bytes_by_partition_id is None else tuple(sh.bytes_by_partition_id)


@pytest.mark.parametrize("path,a,b", _cases())
def test_what_if_lines_are_the_other_runs_lines(path, a, b):
    cap = load_capture(path)
    views, _ = views_from_capture(cap)
    qa = next(q for q in cap.queries if q.preset == a)
    qb = next(q for q in cap.queries if q.preset == b)
    va = next(v for v in views if v.query_id == str(qa.index))
    vb = next(v for v in views if v.query_id == str(qb.index))
    settings = {k: v for k, v in qb.conf.items() if k.startswith("spark.sql.adaptive.")
                or k == "spark.sql.autoBroadcastJoinThreshold"}
    for k in qa.conf:  # settings A has and B does not are B's defaults
        if k.startswith("spark.sql.adaptive.") and k not in qb.conf:
            entry = va.conf.keys.get(k)
            if entry is None or entry.default is None:
                pytest.skip(f"{k} has no fixed default to go back to (a what-if adds settings, it cannot unset one)")
            settings[k] = str(entry.default)
    got = whatif(va, settings).view
    actual = {(s.stage_id, _stats(cap, qb, s.stage_id)): {ln.kind: ln.value for ln in s.lines} for s in vb.shuffles}
    stats_b = {k[1] for k in actual}
    if {_stats(cap, qa, s.stage_id) for s in va.shuffles} != stats_b:
        pytest.skip("the runs' statistics differ (the setting changed what ran before AQE)")
    compared = 0
    for s in got.shuffles:
        key = (s.stage_id, _stats(cap, qa, s.stage_id))
        want = next((v for k, v in actual.items() if k[1] == key[1] and k[0] == s.stage_id), None)
        if want is None:
            continue
        mine = {ln.kind: ln.value for ln in s.lines}
        assert mine == want, f"stage {s.stage_id}: what-if {mine} vs run {want}"
        compared += 1
    assert compared or not got.shuffles
