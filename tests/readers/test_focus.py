"""One execution read alone (issue 41, :mod:`aqe_core.readers.eventlog.focus`): opening one batch
of a long log reads that execution's events and the application's, not every other execution's,
and its view is the one the whole log's reading gives."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from aqe_core.opening import load_source
from aqe_core.readers.eventlog import load
from aqe_core.readers.eventlog.focus import NOT_READ_NOTE, Focus, _execution_id
from aqe_core.views.explain import explain_views
from tests.views.test_query_listing import REPEATED, ROOT, _logs

pytestmark = pytest.mark.slow


def _doc(views, eid):
    return json.dumps(explain_views(views, eid), sort_keys=True, default=str)


def _picked(ids: list[str]) -> list[str]:
    return ids if len(ids) <= 6 else [ids[0], ids[1], ids[len(ids) // 2], ids[-2], ids[-1]]


@pytest.mark.parametrize("path", _logs(), ids=lambda p: p.name)
def test_an_execution_read_alone_is_the_whole_readings_view(path: Path):
    try:
        full = load_source(str(path))
    except Exception:  # noqa: BLE001 - a deliberately broken fixture: nothing to compare
        return
    if full.kind != "eventlog":
        return
    for eid in _picked([v.query_id for v in full.views]):
        alone = load_source(str(path), execution=eid)
        assert [v.query_id for v in alone.views] == [eid], (path, eid)
        assert _doc(alone.views, eid) == _doc(full.views, eid), (path, eid)


@pytest.fixture(scope="module")
def long_log(tmp_path_factory) -> Path:
    """The recorded repeated query, its executions repeated to 300 (ids, times moved on): well
    past the 64 ended executions a reader holds, so each is handed over mid-log."""
    out = tmp_path_factory.mktemp("long") / "app-300"
    subprocess.run([sys.executable, str(ROOT / "tools" / "scale_executions.py"), str(REPEATED), str(out),
                    "--executions", "300"], check=True, capture_output=True, cwd=ROOT)
    return out


def test_on_a_long_log_only_the_executions_around_it_are_read(long_log: Path):
    full = load_source(str(long_log))
    ids = [v.query_id for v in full.views]
    assert len(ids) == 300
    for eid in (ids[3], ids[150], ids[-1]):
        handed: list[int] = []
        focus = Focus(int(eid))
        log = load(str(long_log), hand_over=lambda log, ex, floor: handed.append(ex.id) if ex is not None else None,
                   focus=focus)
        assert focus.started and int(eid) in handed
        assert len(handed) < 100, len(handed)  # (itself, and what started after it before it was handed over)
        assert NOT_READ_NOTE in log.notes and log.complete
        alone = load_source(str(long_log), execution=eid)
        assert _doc(alone.views, eid) == _doc(full.views, eid), eid


def test_an_execution_whose_start_is_not_in_the_log_is_read_with_the_whole_log(tmp_path: Path):
    import zstandard

    lines = zstandard.ZstdDecompressor().stream_reader(REPEATED.open("rb")).read().splitlines(keepends=True)
    start = b'"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"'
    starts = [i for i, ln in enumerate(lines) if start in ln]
    cut = tmp_path / "no-start"
    gone = _execution_id(lines[starts[2]])
    cut.write_bytes(b"".join(ln for i, ln in enumerate(lines) if i != starts[2]))
    full = load_source(str(cut))
    alone = load_source(str(cut), execution=str(gone))
    assert [v.query_id for v in alone.views] == [str(gone)]
    assert _doc(alone.views, str(gone)) == _doc(full.views, str(gone))
    assert load_source(str(cut), execution="999999").views == []


def test_the_execution_id_is_read_from_the_parsed_line():
    assert _execution_id(b'{"Event":"x.SparkListenerSQLExecutionStart","executionId":12,"description":"a"}') == 12
    assert _execution_id(b'{"Event":"x.SparkListenerSQLExecutionStart","description":"a","executionId":7}') == 7
    assert _execution_id(b'{"Event":"x.SparkListenerSQLExecutionStart","executionId":"7"}') is None
    assert _execution_id(b'not json') is None


def test_an_execution_is_told_from_its_line_head_without_a_parse():
    start = b"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"
    f = Focus(12)
    assert f.is_its(b'{"Event":"' + start + b'","executionId":12,"description":"a"}', start)
    assert not f.is_its(b'{"Event":"' + start + b'","executionId":123,"description":"a"}', start)
    assert not f.is_its(b'{"Event":"' + start + b'","executionId":1,"description":"a"}', start)
    assert f.is_its(b'{"Event":"' + start + b'","executionId":12}', start)
    assert f.is_its(b'{"Event":"' + start + b'","description":"a","executionId":12}', start)  # (another order: parsed)
    assert not f.is_its(b'{"Event":"' + start + b'","description":"a","executionId":1}', start)


@pytest.mark.parametrize("command", ["recommend", "releases", "hot-keys", "lint", "explain"])
def test_the_commands_given_an_execution_read_it_alone_and_say_the_same(command, long_log: Path, capsys, monkeypatch):
    """``recommend``, ``releases``, ``hot-keys`` and ``lint`` loaded every view of the log and
    picked one (a 10^5-execution log: 87 s and 875 MB for ``recommend``); now they read that
    execution alone, as ``explain`` does, and print what they printed."""
    import aqe_core.opening as opening
    from aqe_core.cli import main

    args = [command, str(long_log), "--execution", "150", "--json"]
    assert main(args) == 0
    alone = capsys.readouterr().out
    whole_source = opening.load_source
    monkeypatch.setattr(opening, "load_source", lambda path, **kw: whole_source(path, **{**kw, "execution": None}))
    assert main(args) == 0
    assert capsys.readouterr().out == alone
