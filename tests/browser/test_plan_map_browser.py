"""The plan as a map, used as a Spark engineer uses a map (issue 40), in real Chromium, on the
recorded TPC-DS-like Spark 4.3 plans (the q88-like query: eight scalar counts cross-joined, 16
query stages, 199 and 229 operators; the dozen-join query: 336 and 367 operators), in the app
and in the offline report, and on a wide plan in the report (q88-wide, tests/fixtures/eventlogs/
wide_plan: the same counts with sort-merge dimension joins, 48 query stages and 311 operators in
its final plan, as wide as a production query88's), on a desktop display and a laptop's:

* at the default view, after zooming out twice, after "Fit" and after a click on a node, every
  label is inside its box and drawn at 9 px or more, or hidden with a note saying so; no box is
  cut off at the default view; a click opens the details beside the node and the plan keeps its
  scale;
* the wheel over a plan scrolls the page until the plan is clicked; then it zooms the plan;
* Spark's plan text beside the drawing is linked both ways (a line rings its node, a node shows
  its line).

Everything is measured as Chromium drew it (the elements' boxes on the page)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.lens_browser import (ARTIFACTS, CHROMIUM_ARGS, CHROMIUM, app_url, browser, browser_marks,  # noqa: F401 - fixtures
                                goto_page, lens_app, pick_sample, query_box, wait_ready)
from tests.browser.test_plan_graph_browser import BIG_LABEL, BIG_LOG, _open_query, _sample_labels

pytestmark = browser_marks

ROOT = Path(__file__).resolve().parents[2]
#: the wide plan (tools/record_big_plans.py --queries q88-wide; tests/figures/test_wide_plan.py pins its width)
WIDE_LOG = ROOT / "tests" / "fixtures" / "eventlogs" / "wide_plan" / "local-1795904186272.zstd"
VIEWPORTS = {"desktop": {"width": 1920, "height": 1080}, "laptop": {"width": 1280, "height": 800}}

#: every plan map on the page (inside Streamlit's component shadow roots too), as drawn
_MEASURE = """
() => {
  const maps = [];
  const walk = (root) => { root.querySelectorAll('.pm').forEach(m => maps.push(m));
                           root.querySelectorAll('*').forEach(e => { if (e.shadowRoot) walk(e.shadowRoot); }); };
  walk(document);
  const rect = (r) => ({x0: r.left, x1: r.right, y0: r.top, y1: r.bottom});
  return maps.map(m => {
    const view = m.querySelector('.pm-view'), svg = m.querySelector('.pm-svg'), world = m.querySelector('.pm-world');
    const s = world.transform.baseVal.consolidate().matrix.a;
    const det = m.querySelector('.pm-details');
    return {title: (m.querySelector('.pm-title') || {}).textContent || '', view: rect(view.getBoundingClientRect()), s,
      small: svg.classList.contains('pm-small'), note: getComputedStyle(m.querySelector('.pm-note')).display !== 'none',
      transform: world.getAttribute('transform'),
      details: getComputedStyle(det).display !== 'none' ? rect(det.getBoundingClientRect()) : null,
      boxes: [...m.querySelectorAll('.pm-box')].map(g => ({key: g.dataset.key,
        ...rect(g.querySelector('.pm-rect').getBoundingClientRect()),
        labels: [...g.querySelectorAll('.pm-label text')].map(t => {
          const b = t.getBoundingClientRect();
          return {...rect(b), text: t.textContent, shown: getComputedStyle(t).display !== 'none' && b.width > 0,
                  font: parseFloat(t.getAttribute('font-size')) * s}; })}))};
  });
}
"""

#: how far the page has scrolled (Streamlit scrolls its main section, a report the document)
_SCROLLED = """
() => [document.scrollingElement, document.querySelector('[data-testid="stMain"]'),
       document.querySelector('[data-testid="stAppViewContainer"]')].filter(Boolean)
      .reduce((a, e) => a + e.scrollTop, 0)
"""


def _maps(page) -> list[dict]:
    page.wait_for_timeout(300)
    return page.evaluate(_MEASURE)


def check_map(m: dict, what: str, whole: bool) -> None:
    """Labels in their boxes at >= 9 px, or hidden with the note; ``whole``: no box cut off."""
    name = f"{what} / {m['title']}"
    assert m["boxes"], name
    if m["small"]:
        assert m["note"], (name, "labels hidden without the note")
        assert not any(lb["shown"] for b in m["boxes"] for lb in b["labels"]), (name, "a label shown under 9 px")
    else:
        assert not m["note"], name
        for b in m["boxes"]:
            for lb in b["labels"]:
                assert lb["shown"], (name, b["key"], lb["text"])
                assert lb["font"] >= 9 - 1e-6, (name, b["key"], lb["font"])
                assert b["x0"] - 0.5 <= lb["x0"] and lb["x1"] <= b["x1"] + 0.5, (name, "wider than its box", b["key"], lb)
                assert b["y0"] - 0.5 <= lb["y0"] and lb["y1"] <= b["y1"] + 0.5, (name, "taller than its box", b["key"], lb)
    if whole:
        v = m["view"]
        for b in m["boxes"]:
            assert v["x0"] - 0.5 <= b["x0"] and b["x1"] <= v["x1"] + 0.5, (name, "cut off at the side", b["key"])
            assert v["y0"] - 0.5 <= b["y0"] and b["y1"] <= v["y1"] + 0.5, (name, "cut off at the bottom", b["key"])


def _maps_located(page):
    """The plan maps' locators (Playwright's locators see into shadow roots)."""
    return page.locator(".pm")


def explore(page, what: str, shots: str = "") -> None:
    """Default view, zoom out twice, fit, click a node: the checks after each, on every map."""
    maps = _maps(page)
    assert maps, what
    for m in maps:
        check_map(m, f"{what}, default view", whole=True)
    if shots:
        page.screenshot(path=str(ARTIFACTS / f"{shots}-default.png"))
    located = _maps_located(page)
    for i in range(located.count()):
        pm = located.nth(i)
        pm.scroll_into_view_if_needed()
        minus = pm.locator(".pm-btn", has_text="\u2212")
        for _ in range(3):  # 0.8^3: about half the size
            minus.click()
        m = _maps(page)[i]
        check_map(m, f"{what}, zoomed out x2", whole=False)
        pm.locator(".pm-btn", has_text="Fit").click()
        m = _maps(page)[i]
        check_map(m, f"{what}, after fit", whole=True)
        before = m["transform"]
        boxes = pm.locator(".pm-box")
        boxes.nth(boxes.count() // 2).click()
        m = _maps(page)[i]
        assert m["transform"] == before, (what, "a click moved or re-laid the plan")
        assert m["details"] is not None, (what, "no details after a click")
        d, v = m["details"], m["view"]
        assert v["x0"] - 0.5 <= d["x0"] and d["x1"] <= v["x1"] + 0.5, (what, "details outside the plan's view", d, v)
        check_map(m, f"{what}, after a click", whole=True)
        if shots and i == located.count() - 1:
            page.screenshot(path=str(ARTIFACTS / f"{shots}-click.png"))
        page.keyboard.press("Escape")


def text_linked_both_ways(page, what: str) -> None:
    """Spark's plan text beside the drawing: a line clicked rings its node and opens its details;
    a node's "Show in the plan text" marks its line."""
    pm = _maps_located(page).first
    pm.scroll_into_view_if_needed()
    pm.locator(".pm-bar .pm-btn", has_text="Plan text").click()
    lines = pm.locator(".pm-t-linked")
    assert lines.count() >= 10, what
    line = lines.nth(lines.count() // 2)
    line.click()
    assert pm.locator(".pm-ring").count() >= 1, (what, "a clicked line rings no node")
    assert pm.locator(".pm-details").is_visible(), (what, "a clicked line opens no details")
    assert "pm-t-on" in (line.get_attribute("class") or ""), (what, "the clicked line is not marked")
    page.keyboard.press("Escape")
    pm.locator(".pm-bar .pm-btn", has_text="Plan text").click()  # closed: the boxes are all in reach
    pm.locator(".pm-bar .pm-btn", has_text="Fit").click()  # (the line's node was brought into view)
    pm.locator(".pm-box").first.click()
    pm.locator(".pm-btn", has_text="Show in the plan text").click()
    marked = pm.locator(".pm-t-on")
    assert marked.count() >= 1 and marked.first.is_visible(), (what, "a node's line is not shown")
    page.keyboard.press("Escape")


def wheel_scrolls_the_page(page, what: str) -> None:
    """Over a plan not clicked, the wheel scrolls the page; over a clicked one it zooms the plan."""
    page.evaluate("() => [document.scrollingElement, document.querySelector('[data-testid=\"stMain\"]')]"
                  ".filter(Boolean).forEach(e => { e.scrollTop = 0; })")
    pm = _maps_located(page).first
    pm.scroll_into_view_if_needed()
    page.mouse.click(5, 5)  # somewhere else on the page: the plan is not engaged
    view = pm.locator(".pm-view").bounding_box()
    before, scrolled = _maps(page)[0]["transform"], page.evaluate(_SCROLLED)
    page.mouse.move(view["x"] + view["width"] / 2, view["y"] + min(view["height"], 300) / 2)
    page.mouse.wheel(0, 300)
    page.wait_for_timeout(400)
    assert page.evaluate(_SCROLLED) > scrolled, (what, "the wheel did not scroll the page")
    assert _maps(page)[0]["transform"] == before, (what, "the wheel zoomed a plan nobody clicked")
    view = pm.locator(".pm-view").bounding_box()
    top = max(view["y"], 100) + 4  # the plan's part in the window, below the app's fixed header
    page.mouse.click(view["x"] + 3, top)  # engage: a click on the plan's background
    scrolled = page.evaluate(_SCROLLED)
    page.mouse.move(view["x"] + view["width"] / 2, top + 100)
    page.mouse.wheel(0, -300)
    page.wait_for_timeout(400)
    assert _maps(page)[0]["transform"] != before, (what, "the wheel did not zoom the clicked plan")
    assert abs(page.evaluate(_SCROLLED) - scrolled) < 1, (what, "the page scrolled while zooming the plan")


@pytest.mark.parametrize("screen", list(VIEWPORTS))
def test_the_plan_map_in_the_app(app_url, browser, screen):
    ctx = browser.new_context(viewport=VIEWPORTS[screen])
    page = ctx.new_page()
    page.set_default_timeout(90_000)
    page.goto(app_url)
    wait_ready(page)
    pick_sample(page, next(o for o in _sample_labels() if o.startswith(BIG_LABEL)))
    goto_page(page, "Plans")
    for query, name in (("31", "q88-like"), ("32", "dozen-joins")):
        _open_query(page, query)
        _maps_located(page).first.wait_for()
        explore(page, f"app {screen}, {name}", shots=f"plan-map-{screen}-{name}")
    text_linked_both_ways(page, f"app {screen}")
    wheel_scrolls_the_page(page, f"app {screen}")
    ctx.close()


@pytest.mark.parametrize("screen", list(VIEWPORTS))
def test_the_plan_map_in_the_report(browser, tmp_path, screen):
    from aqe_core.model.presets import BUILTIN_PRESETS
    from aqe_core.opening import load_source
    from ui.share import report_html

    srcs = {"q88-like": load_source(str(BIG_LOG))}
    srcs["dozen-joins"] = srcs["q88-like"]
    srcs["q88-wide"] = load_source(str(WIDE_LOG))
    ctx = browser.new_context(viewport=VIEWPORTS[screen])
    page = ctx.new_page()
    for name, src in srcs.items():
        view = next(v for v in src.views if v.description == name)
        path = tmp_path / f"{name}.html"
        path.write_text(report_html(src, view, BUILTIN_PRESETS[:1]), encoding="utf-8")
        page.goto(path.as_uri())
        page.locator(".pm").first.wait_for()
        explore(page, f"report {screen}, {name}")
        if name == "q88-like":
            text_linked_both_ways(page, f"report {screen}")
            wheel_scrolls_the_page(page, f"report {screen}")
    ctx.close()
