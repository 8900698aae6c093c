"""Labels tell the truth (issue 23): the sidebar names the source in use (a run's capture
included), an upload's error names the user's own file (uploads are kept once per content),
and a cut or damaged log says so at the top of every page. Driven headless with AppTest on
real recorded logs and captures (no JVM: a run's capture is a capture recorded from PySpark)."""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
CAPTURE = ROOT / "sample_logs" / "captures" / "4.3.0-skew_join_inner.json.gz"
PLAIN_301 = ROOT / "sample_logs" / "eventlogs" / "local-1795309249168"  # Spark 3.0.1, uncompressed
PAGES = ["plans", "partitions", "whatif", "compare", "run", "fleet", "share"]


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "lens-home"))
    for var in ("AQE_LENS_MASTERS", "AQE_LENS_CONFIG", "AQE_LENS_ROOTS"):
        monkeypatch.delenv(var, raising=False)


def _app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


def _go(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, (page, at.exception)
    return at


def _in_use(at: AppTest) -> str:
    return next(m.value for m in at.sidebar.markdown if m.value.startswith("**In use:**")).replace("\\", "")


def _upload(at: AppTest, name: str, data: bytes) -> AppTest:
    at.sidebar.radio(key="source_mode").set_value("Upload").run()
    at.sidebar.file_uploader(key="upload").upload(name, data, "application/octet-stream").run()
    assert not at.exception, at.exception
    return at


def _past_run(job_id: str, what: str) -> Path:
    """A finished run as the server lists it: its capture (recorded from PySpark) and index entry."""
    from aqe_core.live.run_index import RunEntry, RunIndex

    runs = Path(os.environ["AQE_LENS_HOME"]) / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    name = f"20260101-120000-{job_id}.json.gz"
    shutil.copy(CAPTURE, runs / name)
    RunIndex().record(RunEntry(job_id, what, "workload", "done", time.time(), time.time(), name, "captured 2 queries"))
    return runs / name


def _assert_shows_run(at: AppTest, path: Path, job_id: str) -> None:
    assert at.session_state["source_path"] == str(path)
    assert _in_use(at) == f"**In use:** capture of run {job_id} (skew_join_inner)"
    assert at.sidebar.radio(key="source_mode").value == "Path on server"
    assert at.sidebar.text_input(key="server_path").value == str(path)
    assert not [s for s in at.sidebar.selectbox if s.key == "sample_pick"]  # no bundled sample named
    assert "skew_join_inner" in at.sidebar.caption[0].value.replace("\\", "")


def test_a_past_run_opened_while_sample_was_chosen_is_named_not_the_sample():
    at = _app()
    assert at.sidebar.radio(key="source_mode").value == "Sample"
    assert "Spark 4.3" in _in_use(at) or "event log" in _in_use(at)  # the default sample, named
    path = _past_run("0123456789ab", "skew_join_inner")
    _go(at, "run")
    at.button(key="open_run_0123456789ab").click().run()
    assert not at.exception, at.exception
    _assert_shows_run(at, path, "0123456789ab")
    for page in ("plans", "overview"):
        _go(at, page)
        _assert_shows_run(at, path, "0123456789ab")
    # going back to the sample picker shows no sample picked: the run's capture is still the source
    at.sidebar.radio(key="source_mode").set_value("Sample").run()
    assert at.sidebar.selectbox(key="sample_pick").value is None
    assert at.session_state["source_path"] == str(path)
    assert _in_use(at).startswith("**In use:** capture of run 0123456789ab")


def test_a_finished_run_becomes_the_source_and_the_sidebar_says_so():
    """The Run page's own path: a finished job opens its capture (the job is put in the server's
    run manager as finished; its capture is a real recorded one, so no JVM is needed)."""
    from aqe_core.live.jobs import RunJob
    from ui.run import run_manager

    at = _app()
    _go(at, "run")
    path = _past_run("abcdef012345", "skew_join_inner")
    job = RunJob("abcdef012345", "workload", "skew_join_inner", state="done", message="captured 2 queries",
                 result_path=str(path))
    mgr = run_manager()
    mgr._jobs[job.job_id] = job
    try:
        at.session_state["run_job"] = job.job_id
        at.run()
        assert not at.exception, at.exception
        at.run()  # the run's fragment set the source and asked for a full rerun
        assert not at.exception, at.exception
        _assert_shows_run(at, path, "abcdef012345")
        _go(at, "partitions")
        _assert_shows_run(at, path, "abcdef012345")
    finally:
        mgr._jobs.pop(job.job_id, None)


def test_a_sample_picked_again_is_named():
    at = _app()
    from aqe_core.opening import sample_sources

    cap = next(s for s in sample_sources() if s.kind == "capture")
    at.sidebar.selectbox(key="sample_pick").set_value(cap).run()
    assert not at.exception, at.exception
    assert _in_use(at) == f"**In use:** {cap.label}"
    _go(at, "plans")
    assert at.sidebar.selectbox(key="sample_pick").value == cap


@pytest.mark.parametrize("content", [b"", b"\x00\x01 not an event log"], ids=["empty", "bad"])
def test_two_sessions_uploading_the_same_bytes_each_see_their_own_file_name(content):
    first = _upload(_app(), "first-user.log", content)
    assert any("first-user.log" in e.value.replace("\\", "") for e in first.sidebar.error), first.sidebar.error
    second = _upload(_app(), "second-user.log", content)
    errors = [e.value.replace("\\", "") for e in second.sidebar.error]
    assert errors and all("first-user" not in e for e in errors), errors
    assert any("second-user.log" in e for e in errors), errors
    assert _in_use(second) == "**In use:** second-user.log"


def test_a_cut_upload_names_the_users_file_in_its_label_and_notes():
    cut = PLAIN_301.read_bytes()[:60_000]
    _upload(_app(), "mine.log", cut)
    at = _upload(_app(), "yours.log", cut)
    texts = [at.sidebar.caption[0].value] + [w.value for w in at.warning] + [c.value for c in at.caption]
    assert not any("mine" in t for t in texts), texts
    assert "yours.log" in at.sidebar.caption[0].value.replace("\\", "")


def _first_main(at: AppTest):
    """The first element drawn in the page's main area."""
    return next(iter(at.main.children.values()))


@pytest.mark.parametrize("cut_at", [0.5, 0.9])
def test_a_truncated_log_says_so_at_the_top_of_every_page(cut_at):
    """A real Spark 3.0.1 log cut mid-line: its end (and ApplicationEnd) is gone."""
    data = PLAIN_301.read_bytes()
    cut = data[: int(len(data) * cut_at)]
    assert not cut.endswith(b"\n")
    at = _upload(_app(), "app-log-cut", cut)
    assert not at.sidebar.error, [e.value for e in at.sidebar.error]
    for page in ["overview", *PAGES]:
        _go(at, page)
        top = _first_main(at)
        assert top.type == "warning", (page, top)
        assert "This log is incomplete" in top.value and "the last line is cut" in top.value, (page, top.value)


def test_a_damaged_log_says_so_at_the_top_of_every_page():
    """Lines that are not events in the middle of a real log: read, with a warning on top."""
    lines = PLAIN_301.read_bytes().splitlines(keepends=True)
    damaged = b"".join(lines[:100] + [b"{not json at all\n", b"\x00\x01\x02\n"] + lines[100:])
    at = _upload(_app(), "damaged.log", damaged)
    for page in ["overview", *PAGES]:
        _go(at, page)
        top = _first_main(at)
        assert top.type == "warning" and top.value.startswith("**Read with warnings**"), (page, top)
        assert "2 line\\(s\\) are not JSON events" in top.value
        assert "incomplete" not in top.value  # the log is whole: ApplicationEnd was read


def test_a_whole_log_has_no_banner():
    at = _upload(_app(), "whole.log", PLAIN_301.read_bytes())
    for page in ["overview", "plans"]:
        _go(at, page)
        assert not at.warning or "incomplete" not in " ".join(w.value for w in at.warning)
        assert _first_main(at).type != "warning"
