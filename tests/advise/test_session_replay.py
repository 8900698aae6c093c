"""A fix's "set for the session" effects, kept per capture and replayed only for the queries that
ask for a setting the fix changes (:mod:`aqe_core.advise.session_replay`), say exactly what the
plain way says: every other query replayed twice, without and with the settings. Checked on
every capture recorded from real Spark, for the settings the recommender proposes there and for
a panel of settings; and, on 4.3.0, for a change of every setting the release has."""
from __future__ import annotations

import gc
from dataclasses import replace
from functools import cache

import pytest

from aqe_core import config
from aqe_core.advise.recommend import _effects, application_effects, recommend
from aqe_core.advise.session_replay import session_replays
from aqe_core.config import keys_for
from aqe_core.engine.simulate import simulate
from aqe_core.readers.capture_file import load_capture
from aqe_core.versions import as_version
from tests.rules.recorded import CAPTURES, PATHS

PANEL = [
    {config.SKEW_JOIN_SKEWED_PARTITION_FACTOR: "1.5"},
    {config.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD: "1k", config.SKEW_JOIN_SKEWED_PARTITION_FACTOR: "2"},
    {config.ADVISORY_PARTITION_SIZE_IN_BYTES: "2k"},
    {config.COALESCE_PARTITIONS_ENABLED: "false"},
    {config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD: "10m"},
    {config.AUTO_BROADCASTJOIN_THRESHOLD: "-1"},
    {config.SKEW_JOIN_ENABLED: "false"},
    {"spark.sql.adaptive.noSuchSetting": "1"},
]


@cache
def _capture(path):
    return load_capture(path)


def _plainly(capture, settings):
    """Every query's effects the plain way: the whole capture replayed without and with."""
    before, after = simulate(capture).queries, simulate(capture, settings).queries
    return [_effects(b, a, q) for q, b, a in zip(capture.queries, before, after)]


def _kept(capture, settings):
    return [_effects(b, a, q) for q, b, a in session_replays(capture, settings)]


def _fix_settings(capture) -> list[dict[str, str]]:
    """What the recommender proposes for the capture's first queries, each set once."""
    out: dict[tuple, dict[str, str]] = {}
    for q in capture.queries[:3]:
        for fix in recommend(capture, q, application=False):
            for s in [fix.settings] + [a.settings for a in fix.alternatives]:
                out.setdefault(tuple(sorted(s.items())), s)
    return list(out.values())


@pytest.mark.parametrize("path", PATHS, ids=lambda p: f"{p.parent.name}/{p.name.split('.')[0]}")
def test_kept_replays_say_what_replaying_everything_says(path):
    capture = _capture(path)
    for settings in _fix_settings(capture) + PANEL:
        assert _kept(capture, settings) == _plainly(capture, settings), settings


def _every_change(v) -> list[dict[str, str]]:
    """One changed value for each setting of release ``v``."""
    alternative = {"bool": lambda d: "false" if d == "true" else "true", "int": lambda d: "3", "double": lambda d: "1.2",
                   "bytes": lambda d: "3k"}
    out = []
    for key, entry in keys_for(v).items():
        if entry.type in alternative and key not in (config.SHUFFLE_PARTITIONS,):
            default = None if entry.fallback else entry.default
            out.append({key: alternative[entry.type](default)})
    return out


@pytest.mark.slow
def test_a_change_of_any_setting_is_seen_by_the_queries_that_ask_for_it():
    for path in sorted((CAPTURES / "4.3.0").glob("*.json.gz")):
        capture = _capture(path)
        for settings in _every_change(as_version(capture.spark_version)):
            assert _kept(capture, settings) == _plainly(capture, settings), (path.name, settings)


def test_application_effects_leave_out_the_query_itself_and_repeat_settings_from_memory():
    capture = _capture(CAPTURES / "4.3.0" / "skew_join_inner.json.gz")
    q = capture.queries[0]
    settings = {config.SKEW_JOIN_SKEWED_PARTITION_FACTOR: "1.5"}
    rest = replace(capture, queries=capture.queries[1:])
    before, after = simulate(rest).queries, simulate(rest, settings).queries
    changed = [x for x, b, a in zip(rest.queries, before, after) if _effects(b, a, x)]
    lines = application_effects(capture, q, settings)
    assert lines[0].endswith(f"{len(rest.queries)} other queries of this capture")
    assert len(lines) - 1 == min(len(changed), 20) + (len(changed) > 20)
    first = session_replays(capture, settings)
    assert all(a is b for (_, _, a), (_, _, b) in zip(first, session_replays(capture, settings)))


def test_a_capture_let_go_takes_its_replays_with_it():
    from aqe_core.advise import session_replay

    capture = load_capture(CAPTURES / "4.3.0" / "aggregate_coalesce.json.gz")
    session_replays(capture, {config.COALESCE_PARTITIONS_ENABLED: "false"})
    held = len(session_replay._SESSIONS)
    del capture
    gc.collect()
    assert len(session_replay._SESSIONS) == held - 1


def test_a_read_source_keeps_the_replays_of_every_fix_its_queries_propose():
    """prepare_fixes (a server calls it after a read) replays the application under each fix
    its exact queries propose, so no later recommend replays; the answers do not change."""
    from aqe_core.advise import session_replay
    from aqe_core.advise.fixes import prepare_fixes
    from aqe_core.opening import load_source

    path = CAPTURES / "4.3.0" / "skew_join_both_sides.json.gz"  # 3 queries, 5 fixes
    cold = load_capture(path)
    expected = [[f.to_dict() for f in recommend(cold, q)] for q in cold.queries]
    views = load_source(str(path)).views
    prepare_fixes(views)
    capture = next(v.model.raw[0] for v in views if v.model is not None and v.model.raw is not None)
    s = session_replay._session(capture)
    proposed = {tuple(sorted(f.settings.items())) for q in capture.queries for f in recommend(capture, q, application=False)}
    assert proposed and proposed <= set(s.warmed)
    assert [[f.to_dict() for f in recommend(capture, q)] for q in capture.queries] == expected
    for key in proposed:  # never let go, unlike the sets a question brings
        for i in range(session_replay.KEPT_SETTINGS + 1):
            session_replays(capture, {config.ADVISORY_PARTITION_SIZE_IN_BYTES: f"{i + 1}k"})
        assert key in s.warmed


def test_fixes_are_prepared_within_a_time_budget():
    """An application of hundreds of exact queries must not hold a read for minutes: with no
    budget left, only the application's own replays are made."""
    from aqe_core.advise import session_replay
    from aqe_core.advise.fixes import prepare_fixes
    from aqe_core.opening import load_source

    views = load_source(str(CAPTURES / "4.3.0" / "skew_join_inner.json.gz")).views
    prepare_fixes(views, budget_s=0)
    capture = next(v.model.raw[0] for v in views if v.model is not None and v.model.raw is not None)
    s = session_replay._session(capture)
    assert s.before and not s.warmed
