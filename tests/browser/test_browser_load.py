"""Eight people on one server at once: each browser session opens its own bundled sample and
query through the sidebar, at the same time as the others, and only ever sees its own (no
cross-talk through module globals or caches shared between sessions).
"""
from __future__ import annotations

import re
from dataclasses import dataclass


from tests.lens_browser import browser, browser_marks, choose, lens_app, query_box, sample_box, wait_ready  # noqa: F401 - fixtures
from aqe_core.plain_text import WORD_JOINER
from aqe_core.opening import load_source, sample_sources

pytestmark = browser_marks

#: (sample key, query id): eight different sources, eight different queries
PLAN = [("eventlog:spark301_plain", "9"), ("eventlog:spark359_lzf", "3"), ("eventlog:spark359_zstd", "6"),
        ("eventlog:spark430_lz4", "7"), ("eventlog:spark430_rolling_zstd", "10"), ("eventlog:spark430_snappy", "8"),
        ("capture:4.3.0-aggregate_coalesce.json.gz", "1"), ("capture:3.0.1-skew_join_inner.json.gz", "2")]


@dataclass(frozen=True)
class Session:
    option: str  # the sample's entry in the sidebar picker
    source_label: str  # what the sidebar shows once it is open
    query_id: str
    heading: str  # the Overview's heading for that query


def _sessions() -> list[Session]:
    by_key = {s.key: s for s in sample_sources()}
    out = []
    for key, qid in PLAN:
        sample = by_key[key]
        src = load_source(sample.path)
        view = next(v for v in src.views if v.query_id == qid)
        desc = " ".join(view.description.split())
        out.append(Session(sample.label, src.label, qid, f"Query {qid}: {desc[:99] + '…' if len(desc) > 100 else desc}"))
    return out


def _text(locator) -> str:
    return " ".join(locator.all_inner_texts()).replace(WORD_JOINER, "")


def _heading(page) -> str:
    """The Overview's query heading, once drawn (on a loaded server the page can report ready
    between two script runs, before the heading is back)."""
    found = page.get_by_test_id("stMain").get_by_role("heading").filter(has_text="Query ")
    found.first.wait_for(state="visible")
    return _text(found)


def _check(page, me: Session, others: list[Session], where: str) -> None:
    sidebar = _text(page.get_by_test_id("stSidebar"))
    assert me.source_label in sidebar, (where, me.source_label, sidebar[-400:])
    leaked = [o.source_label for o in others if o.source_label in sidebar]
    assert leaked == [], (where, me.source_label, leaked)


def test_eight_sessions_see_only_their_own_source_and_query(lens_app, browser):
    sessions = _sessions()
    labels = [s.source_label for s in sessions]
    assert len(set(labels)) == 8 and not any(a != b and a in b for a in labels for b in labels)
    contexts = [browser.new_context(viewport={"width": 1300, "height": 900}) for _ in sessions]
    pages = [c.new_page() for c in contexts]
    try:
        for p in pages:
            p.set_default_timeout(120_000)
            p.goto(lens_app.url)
        for p in pages:
            wait_ready(p)
        # every session picks its sample, all before any waits: the server runs them together
        for p, s in zip(pages, sessions):
            choose(p, sample_box(p),
                   p.get_by_role("option", name=s.option, exact=True))
        for p in pages:
            wait_ready(p)
        for p, s in zip(pages, sessions):
            choose(p, query_box(p),
                   p.get_by_role("option", name=re.compile(rf"^#{s.query_id} ")))
        for p in pages:
            wait_ready(p)
        for p, s in zip(pages, sessions):
            others = [o for o in sessions if o is not s]
            _check(p, s, others, "overview")
            heading = _heading(p)
            assert heading == s.heading, (s.source_label, heading)
            assert f"q={s.query_id}" in p.url
        # everyone moves on at once; each page still draws its own session's source and query
        for p in pages:
            p.get_by_test_id("stSidebarNav").get_by_text("Partitions", exact=True).click()
        for p in pages:
            p.wait_for_timeout(200)
            wait_ready(p)
        for p in pages:
            p.get_by_test_id("stSidebarNav").get_by_text("Overview", exact=True).click()
        for p, s in zip(pages, sessions):
            p.wait_for_timeout(200)
            wait_ready(p)
            _check(p, s, [o for o in sessions if o is not s], "back on overview")
            heading = _heading(p)
            assert heading == s.heading, (s.source_label, heading)
    finally:
        for c in contexts:
            c.close()
