"""Every malformed capture gives the documented error with its cause, wherever it is read
(issue 24, finding 6): loading, ``recommend --verify``, Re-run and Verify; and a size at the
end of Spark's 64-bit range is modelled, not an OverflowError.

A small structured fuzz (seeded): each JSON path of the sample captures gets a value of the
wrong type or out of range; loading and the views built on it raise only the documented
error, and never its last-resort "internal error".
"""
from __future__ import annotations

import copy
import gzip
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from aqe_core.model.capture import Capture, CaptureFormatError
from aqe_core.readers.capture_file import load_capture
from aqe_core.opening import SourceError, load_source

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_logs" / "captures" / "4.3.0-skew_join_inner.json.gz"  # has an exact fix
OLD = ROOT / "sample_logs" / "captures" / "3.0.1-skew_join_inner.json.gz"


def _doc(path: Path = SAMPLE) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()))


def _write(tmp_path: Path, doc: dict, name: str = "cap.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p


@pytest.mark.parametrize("bad", [["CREATE TEMPORARY VIEW t AS SELECT 1"], "x", 5, {"t": 1}, {"t": ["SELECT 1"]}])
def test_run_views_of_the_wrong_shape_are_a_capture_format_error(tmp_path, bad):
    doc = _doc()
    doc["run"]["views"] = bad
    with pytest.raises(CaptureFormatError, match=r"run\.views"):
        load_capture(str(_write(tmp_path, doc)))
    with pytest.raises(SourceError, match=r"malformed capture: run\.views"):
        load_source(str(_write(tmp_path, doc)))


@pytest.mark.parametrize("key,bad", [("sql", ["SELECT 1"]), ("presets", "default"), ("scale", "big"),
                                     ("workload", {"a": 1}), ("kind", 3)])
def test_other_run_fields_read_by_the_app_are_checked(tmp_path, key, bad):
    doc = _doc()
    doc["run"][key] = bad
    with pytest.raises(CaptureFormatError, match=rf"run\.{key}"):
        load_capture(str(_write(tmp_path, doc)))


def test_recommend_verify_on_a_capture_whose_views_are_a_list_is_one_clear_line(tmp_path):
    doc = _doc()
    doc["run"]["views"] = list(doc["run"]["views"].values())
    p = _write(tmp_path, doc)
    env = dict(os.environ, PYTHONPATH=str(ROOT), AQE_LENS_HOME=str(tmp_path / "home"))
    out = subprocess.run([sys.executable, "-m", "aqe_core", "recommend", "--verify", str(p)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode == 2
    assert "malformed capture: run.views" in out.stderr


def test_rerun_and_verify_refuse_a_malformed_run_with_the_handlers_error(tmp_path, monkeypatch):
    """Re-run reads the file again and Verify gets the loaded capture: both raise the
    ValueError their page handlers catch (ui/rerun.py, ui/verify.py), before Spark starts."""
    from aqe_core.live.jobs import RunManager
    from aqe_core.user_presets import get_preset

    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "home"))
    doc = _doc()
    doc["run"]["views"] = list(doc["run"]["views"].values())
    p = _write(tmp_path, doc)
    mgr = RunManager(runtime=object())
    with pytest.raises(ValueError, match=r"run\.views"):
        mgr.submit_rerun(str(p), 0, [get_preset("actual")])
    with pytest.raises(ValueError, match="cannot be read again"):  # removed since it was opened
        mgr.submit_rerun(str(tmp_path / "gone.json"), 0, [get_preset("actual")])
    cap = load_capture(str(SAMPLE))
    cap.run["views"] = ["CREATE TEMPORARY VIEW t AS SELECT 1"]  # a capture built in code is checked too
    with pytest.raises(ValueError, match=r"run\.views"):
        mgr.submit_verify(cap, cap.queries[0].index, {"spark.sql.adaptive.enabled": "true"})


@pytest.mark.parametrize("sample", [SAMPLE, OLD], ids=["4.3.0", "3.0.1"])
def test_a_partition_of_2_pow_63_minus_1_bytes_is_modelled(tmp_path, sample):
    """Spark's sizes are Longs: the largest one loads and gives views (3.0's skew rule works on
    coalesced sums, which may pass the int64 range: compared saturated, not an OverflowError)."""
    doc = _doc(sample)
    for q in doc["queries"]:
        for sh in q["shuffles"]:
            b = sh["bytes_by_partition_id"]
            if b:
                b[:] = [1] * len(b)
                b[len(b) // 2] = 2**63 - 1 - len(b)
                sh["map_sizes"] = None
    src = load_source(str(_write(tmp_path, doc)))
    assert src.views and any(s.sizes_before for v in src.views for s in v.shuffles)


def test_sizes_adding_up_past_64_bits_are_a_clear_error(tmp_path):
    doc = _doc(OLD)
    for sh in doc["queries"][0]["shuffles"]:
        sh["bytes_by_partition_id"] = [2**63 - 1] * len(sh["bytes_by_partition_id"])
    with pytest.raises(SourceError, match=r"bytes_by_partition_id adds up to more than Spark's 64-bit range"):
        load_source(str(_write(tmp_path, doc)))


# ------------------------------------------------------------------------------------------
# the structured fuzz

WRONG = [None, True, -1, 1.5, 2**63 - 1, -(2**63), 2**64, float("1e308"), "", "x", [], {}, [1, "a"], {"k": [None]}]


def _paths(doc, prefix=()):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield prefix + (k,)
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:3]):  # the first items of a list stand for the rest
            yield prefix + (i,)
            yield from _paths(v, prefix + (i,))


def _set(doc, path, value):
    for k in path[:-1]:
        doc = doc[k]
    doc[path[-1]] = value


def _small(doc: dict) -> dict:
    """One query (the first), so each case stays fast."""
    doc = copy.deepcopy(doc)
    doc["queries"] = doc["queries"][:1]
    return doc


def _cases(seed: int, n: int):
    rnd = random.Random(seed)
    bases = [_small(_doc(p)) for p in (SAMPLE, OLD, ROOT / "sample_logs" / "captures" / "4.3.0-sql_group_by.json.gz")]
    every = [(b, p) for b in bases for p in _paths(b)]
    for _ in range(n):
        base, path = rnd.choice(every)
        doc = copy.deepcopy(base)
        _set(doc, path, copy.deepcopy(rnd.choice(WRONG)))
        yield ".".join(map(str, path)), doc


@pytest.mark.parametrize("seed", range(3))
def test_structured_fuzz_of_capture_fields(tmp_path, seed):
    from aqe_core.advise.fixes import fixes_for_view
    from aqe_core.views.triage import triage

    p = tmp_path / "cap.json"
    for where, doc in _cases(seed, 120):
        p.write_text(json.dumps(doc))
        try:
            src = load_source(str(p))
        except SourceError as e:
            assert "internal error" not in str(e) and "\n" not in str(e), (where, str(e))
            continue
        triage(src.views)
        for v in src.views:
            fixes_for_view(v)
            cap = v.model.raw[0] if v.model is not None and v.model.raw else None
            if isinstance(cap, Capture):
                q = cap.queries[0]
                cap.sql_of(q), cap.setup_statements()  # what Re-run, Verify and recommend --verify read
