"""``inspect --json`` copies each execution's document encoded as the reader finalised it
(:class:`EncodedExecutions`, issue 41): the output must be byte for byte what encoding the log's
executions after the load gives, on every recorded log, spilled at once or not at all, with the
late events of real logs (a listener's payloads and task ends after an execution's end bring a
spilled execution back)."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from aqe_core.readers.eventlog import load
from aqe_core.readers.eventlog.errors import Limits
from aqe_core.readers.eventlog.jsonfast import dump_json
from aqe_core.views.encoded_executions import EncodedExecutions
from aqe_core.views.eventlog_summary import write_log_json
from aqe_core.views.execution_summary import FinalSummaries, log_summaries

from tests.readers.test_eventlog_spill import _env_late, _late, _plain_lines, _shuffled, revivals  # noqa: F401
from tests.views.test_query_listing import _logs


def _written(log, known=None, plans=True) -> str:
    out = io.StringIO()
    write_log_json(log, out, plans=plans, encode=lambda v: dump_json(v).decode(), known=known)
    return out.getvalue()


def _load(p: Path, **kw):
    try:
        return load(str(p), **kw)
    except Exception:  # noqa: BLE001 - a deliberately broken fixture: nothing to compare
        return None


@pytest.mark.parametrize("path", _logs(), ids=lambda p: p.name)
def test_encoded_as_finalised_is_what_the_log_encodes_to(path):
    for spill_after, packed in ((0, False), (None, True)):  # (the CLI's: plans not compressed)
        encoded = EncodedExecutions(dump_json)
        log = _load(path, limits=Limits(spill_after=spill_after), on_final=encoded, packed=packed)
        if log is None:
            encoded.close()
            return
        try:
            assert all(eid in encoded for eid in log.executions)
            assert _written(log, encoded) == _written(log)
        finally:
            encoded.close()


def test_without_plans_and_after_a_failed_write(tmp_path):
    path = next(p for p in _logs() if "repeated" in str(p))
    encoded = EncodedExecutions(dump_json, plans=False)
    log = load(str(path), limits=Limits(spill_after=0), on_final=encoded)
    assert _written(log, encoded, plans=False) == _written(log, plans=False)
    encoded.close()  # (what a full disk does: nothing held, every execution encoded by the writer)
    assert not any(eid in encoded for eid in log.executions) and encoded.text(min(log.executions)) is None
    assert _written(log, encoded) == _written(log)


@pytest.mark.parametrize("name", ["local-1795309249168", "local-1795309160158.zstd"])
@pytest.mark.parametrize("move", ["late_1", "late_2", "shuffled_1", "envlate_3"])
def test_late_events_and_late_properties_encode_the_model_the_log_holds(tmp_path, revivals, name, move):  # noqa: F811
    """An execution brought back by a late event, or finalised again at the end because the
    Spark properties came after it was spilled, is encoded and summarised again: what is copied
    is what the log holds."""
    kind, arg = move.rsplit("_", 1)
    moved = {"late": _late, "shuffled": _shuffled, "envlate": _env_late}[kind](_plain_lines(name), int(arg))
    path = tmp_path / "app"
    path.write_bytes(b"".join(moved))
    encoded, summaries = EncodedExecutions(dump_json), FinalSummaries()

    def on_final(log, ex):
        encoded(log, ex)
        summaries(log, ex)

    log = load(str(path), limits=Limits(spill_after=0), on_final=on_final, packed=False)
    try:
        assert _written(log, encoded) == _written(log) == _written(load(str(path), limits=Limits(spill_after=None)))
        assert [summaries[eid] for eid in sorted(log.executions)] == list(log_summaries(log))
        if kind == "late":
            assert revivals[0] > 0
    finally:
        encoded.close()


def test_no_temporary_file_keeps_nothing_and_the_writer_encodes(monkeypatch):
    """An unwritable temp dir is no error: every execution is encoded by the writer."""
    import tempfile

    path = next(p for p in _logs() if "repeated" in str(p))

    def refused(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "TemporaryFile", refused)
    encoded = EncodedExecutions(dump_json)
    log = load(str(path), limits=Limits(spill_after=0), on_final=encoded, packed=False)
    assert not any(eid in encoded for eid in log.executions)
    monkeypatch.undo()
    assert _written(log, encoded) == _written(log)
