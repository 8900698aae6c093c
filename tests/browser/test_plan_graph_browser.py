"""Plan graphs read in a real browser at production scale (issue 23): on the recorded TPC-DS-like
Spark 4.3 plans (the dozen-join query: 336 nodes in its initial plan, 799 in its final one), and on a small plan, in
the app and in the offline report, Chromium draws no two box labels over each other, none
outside its box or cut by the plot's edge, none under 9 px, for the initial and the final plan.

The labels are measured as drawn (each text element's box from the browser), and each plot
box from the figure's own layout (``layout.meta.box_rects``) through the axes' scale.
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

#: every drawn label of every plan chart on the page, with its box and the plot area, in pixels
_MEASURE = """
() => [...document.querySelectorAll('.js-plotly-plot')].filter(gd => gd.layout && gd.layout.meta
        && gd.layout.meta.box_rects).map(gd => {
    const fl = gd._fullLayout, xa = fl.xaxis, ya = fl.yaxis;
    const base = gd.getBoundingClientRect();
    const ox = base.left + xa._offset, oy = base.top + ya._offset;
    const plot = {x0: ox, x1: ox + xa._length, y0: oy, y1: oy + ya._length};
    const i = gd._fullData.findIndex(t => t.name === 'labels');
    const layer = gd.querySelectorAll('.scatterlayer .trace')[i];
    const keys = gd._fullData[i].customdata;
    const labels = [...layer.querySelectorAll('.textpoint text')].map((el, j) => {
        const r = el.getBoundingClientRect();
        const b = gd.layout.meta.box_rects[keys[j]];
        return {key: keys[j], font: parseFloat(getComputedStyle(el).fontSize),
                x0: r.left, x1: r.right, y0: r.top, y1: r.bottom,
                bx0: ox + xa.l2p(b[0]), bx1: ox + xa.l2p(b[1]), by0: oy + ya.l2p(b[3]), by1: oy + ya.l2p(b[2])};
    });
    return {title: (fl.title && fl.title.text) || '', nodes: gd.layout.meta.box_count, plot, labels};
})
"""


def check_legible(charts: list[dict], what: str) -> None:
    """No overlap, nothing outside its box or the plot, nothing under 9 px."""
    assert charts, f"{what}: no plan chart"
    for c in charts:
        name = f"{what} / {c['title']}"
        labels = c["labels"]
        assert labels, name
        p = c["plot"]
        for lb in labels:
            assert lb["font"] >= 9, (name, lb["key"], lb["font"])
            assert p["x0"] - 0.5 <= lb["x0"] and lb["x1"] <= p["x1"] + 0.5, (name, "cut by the plot's edge", lb)
            assert p["y0"] - 0.5 <= lb["y0"] and lb["y1"] <= p["y1"] + 0.5, (name, "cut by the plot's edge", lb)
            assert lb["bx0"] - 0.5 <= lb["x0"] and lb["x1"] <= lb["bx1"] + 0.5, (name, "wider than its box", lb)
            assert lb["by0"] - 0.5 <= lb["y0"] and lb["y1"] <= lb["by1"] + 0.5, (name, "taller than its box", lb)
        rows = sorted(labels, key=lambda lb: lb["x0"])
        for i, a in enumerate(rows):  # sweep: only labels that start before a ends can overlap it
            for b in rows[i + 1:]:
                if b["x0"] >= a["x1"] - 0.5:
                    break
                assert b["y0"] >= a["y1"] - 0.5 or a["y0"] >= b["y1"] - 0.5, (name, "overlap", a["key"], b["key"])


def _open_query(page, query: str) -> None:
    query_box(page).click()
    # the picker lists every query (33 here) in a virtualized list: type to bring this one into it
    page.keyboard.type(f"#{query} ")
    page.get_by_role("option").filter(has_text=f"#{query} ").first.click()
    wait_ready(page)


def _measure(page, expected: int) -> list[dict]:
    page.locator(".js-plotly-plot .textpoint").first.wait_for()
    page.wait_for_timeout(800)
    charts = page.evaluate(_MEASURE)
    assert len(charts) == expected, [c["title"] for c in charts]
    return charts


def test_a_300_node_plan_and_a_small_one_are_legible_in_the_app(app_url, browser):
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    page.set_default_timeout(90_000)
    page.goto(app_url)
    wait_ready(page)
    pick_sample(page, next(o for o in _sample_labels() if o.startswith(BIG_LABEL)))
    goto_page(page, "Plans")
    _open_query(page, "32")  # dozen-joins: 336 nodes initial, 799 final
    charts = _measure(page, 2)
    check_legible(charts, "app, 300-node plan")
    page.screenshot(path=str(ARTIFACTS / "plans-300-nodes.png"))
    _open_query(page, "30")  # q72-like: 66 nodes initial, 137 final
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
