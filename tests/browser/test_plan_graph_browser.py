"""Plan graphs read in a real browser at production scale (issue 23, drawn as maps since issue 40):
on the recorded TPC-DS-like Spark 4.3 plans (the dozen-join query: 336 operators in its initial
plan, 367 in its final one), drawn operator by operator, and on a small plan, in the app and in
the offline report, Chromium draws every box label inside its box at 9 px or more (or hides it
with a note), and no two labels over each other.

The labels are measured as drawn (each text element's box from the browser), with the map
measurement of :mod:`tests.browser.test_plan_map_browser`.
"""
from __future__ import annotations

from pathlib import Path


from tests.lens_browser import (ARTIFACTS, CHROMIUM_ARGS, CHROMIUM, app_url, browser, browser_marks,  # noqa: F401 - fixtures
                                goto_page, lens_app, pick_sample, query_box, wait_ready)

pytestmark = browser_marks

ROOT = Path(__file__).resolve().parents[2]
BIG_LOG = ROOT / "sample_logs" / "eventlogs" / "local-1795649029734.zstd"
BIG_LABEL = "event log: Spark 4.3.0 production-scale TPC-DS-like workload"
#: a Spark engineer's desktop display
VIEWPORT = {"width": 1920, "height": 1080}


def check_legible(maps: list[dict], what: str) -> None:
    """Every label in its box at >= 9 px (or hidden with the note), no two labels overlapping."""
    from tests.browser.test_plan_map_browser import check_map

    assert maps, f"{what}: no plan map"
    for m in maps:
        check_map(m, what, whole=False)
        labels = [lb for b in m["boxes"] for lb in b["labels"] if lb["shown"]]
        rows = sorted(labels, key=lambda lb: lb["x0"])
        for i, a in enumerate(rows):  # sweep: only labels that start before a ends can overlap it
            for b in rows[i + 1:]:
                if b["x0"] >= a["x1"] - 0.5:
                    break
                assert b["y0"] >= a["y1"] - 0.5 or a["y0"] >= b["y1"] - 0.5, (what, "overlap", a["text"], b["text"])


def _open_query(page, query: str) -> None:
    query_box(page).click()
    # the picker lists every query (33 here) in a virtualized list: type to bring this one into it
    page.keyboard.type(f"#{query} ")
    page.get_by_role("option").filter(has_text=f"#{query} ").first.click()
    wait_ready(page)


def _measure(page, expected: int) -> list[dict]:
    from tests.browser.test_plan_map_browser import _maps

    page.locator(".pm-box").first.wait_for()
    maps = _maps(page)
    assert len(maps) == expected, [m["title"] for m in maps]
    return maps


def test_a_300_node_plan_and_a_small_one_are_legible_in_the_app(app_url, browser):
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    page.set_default_timeout(90_000)
    page.goto(app_url)
    wait_ready(page)
    pick_sample(page, next(o for o in _sample_labels() if o.startswith(BIG_LABEL)))
    goto_page(page, "Plans")
    _open_query(page, "32")  # dozen-joins: 336 operators initial, 367 final
    page.get_by_text("Operators", exact=True).click()
    wait_ready(page)
    maps = _measure(page, 2)
    assert all(len(m["boxes"]) >= 300 for m in maps), [len(m["boxes"]) for m in maps]
    check_legible(maps, "app, 300-node plan")
    page.screenshot(path=str(ARTIFACTS / "plans-300-nodes.png"))
    _open_query(page, "30")  # q72-like
    check_legible(_measure(page, 2), "app, q72-like")
    ctx.close()


def test_a_300_node_plan_is_legible_in_the_report(browser, tmp_path):
    from aqe_core.model.presets import BUILTIN_PRESETS
    from aqe_core.opening import load_source
    from ui.share import report_html

    src = load_source(str(BIG_LOG))
    view = next(v for v in src.views if v.description == "dozen-joins")
    assert sum(1 for _ in view.initial_plan.walk()) >= 300
    html_path = tmp_path / "report.html"
    html_path.write_text(report_html(src, view, BUILTIN_PRESETS[:1]), encoding="utf-8")
    small_src = load_source(str(ROOT / "sample_logs" / "eventlogs" / "local-1795309052779.lz4"))
    small = next(v for v in small_src.views if v.final_plan is not None and sum(1 for _ in v.final_plan.walk()) > 15)
    small_path = tmp_path / "small.html"
    small_path.write_text(report_html(small_src, small, BUILTIN_PRESETS[:1]), encoding="utf-8")
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    for path, what in ((html_path, "report, 300-node plan"), (small_path, "report, small plan")):
        page.goto(path.as_uri())
        check_legible(_measure(page, 2), what)
    ctx.close()


def _sample_labels() -> list[str]:
    from aqe_core.opening import sample_sources
    return [s.label for s in sample_sources()]
