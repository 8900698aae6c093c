"""Partition charts as Chromium draws them in the offline report (issue 40, requirement 6), on
every recorded sample event log, at a laptop's width and a desktop's:

* no bar is thinner than 3 px (a histogram never has more bins than 3-pixel bars fit);
* no bar is hidden under a line: the median, threshold and target lines are drawn beneath the
  bars, so a bar at a line's value covers the line, never the other way;
* a chart's title stays inside its chart (long titles wrap);
* the report says nothing about clicking to expand.

Measured on the elements' boxes as drawn, not on the figures' numbers."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.lens_browser import browser, browser_marks  # noqa: F401 - fixture

pytestmark = browser_marks

ROOT = Path(__file__).resolve().parents[2]
LOGS = sorted(p for p in (ROOT / "sample_logs" / "eventlogs").iterdir() if p.name != "MANIFEST.json")
VIEWPORTS = {"desktop": {"width": 1920, "height": 1080}, "laptop": {"width": 1280, "height": 800}}

_MEASURE = """
() => [...document.querySelectorAll('.js-plotly-plot')].map(p => {
  const main = p.querySelector('svg.main-svg').getBoundingClientRect();
  const title = p.querySelector('.gtitle');
  const t = title ? title.getBoundingClientRect() : null;
  return {id: p.id, width: main.width, left: main.left, right: main.right,
    title: t ? {left: t.left, right: t.right, text: title.textContent} : null,
    bars: [...p.querySelectorAll('.barlayer .point path')].map(b => b.getBoundingClientRect())
            .filter(r => r.height > 0).map(r => r.width),
    above: p.querySelectorAll('.layer-above .shapelayer path').length,
    below: p.querySelectorAll('.layer-below .shapelayer path').length};
})
"""


def _richest(src):
    """The query with the most shuffles of more partitions than get a bar each (histograms)."""
    from aqe_core.figures.histograms import BAR_LIMIT

    def many(v) -> int:
        return sum(1 for s in v.shuffles if len(s.sizes_before or s.sizes_after or []) > BAR_LIMIT)
    return max(src.views, key=lambda v: (many(v), len(v.shuffles)))


@pytest.mark.parametrize("screen", list(VIEWPORTS))
def test_report_charts_have_readable_bars_and_whole_titles(browser, tmp_path, screen):
    from aqe_core.model.presets import BUILTIN_PRESETS
    from aqe_core.opening import load_source
    from ui.share import report_html

    ctx = browser.new_context(viewport=VIEWPORTS[screen])
    page = ctx.new_page()
    bars = charts = lines = 0
    for log in LOGS:
        src = load_source(str(log))
        view = _richest(src)
        html = report_html(src, view, BUILTIN_PRESETS[:1])
        path = tmp_path / f"{log.name}.html"
        path.write_text(html, encoding="utf-8")
        page.goto(path.as_uri())
        page.wait_for_timeout(300)
        text = page.evaluate("() => document.body.innerText").lower()
        assert "click to" not in text, f"{log.name}: the offline report speaks of clicking"
        for c in page.evaluate(_MEASURE):
            if not c["id"].startswith("hist-"):
                continue
            what = f"{screen} {log.name} {view.description} {c['id']}"
            charts += 1
            bars += len(c["bars"])
            lines += c["below"]
            thin = [round(w, 1) for w in c["bars"] if w < 3.0]
            assert not thin, f"{what}: bars thinner than 3 px: {thin}"
            assert c["above"] == 0, f"{what}: {c['above']} lines drawn over the bars"
            if c["title"]:
                assert c["left"] - 0.5 <= c["title"]["left"] and c["title"]["right"] <= c["right"] + 0.5, \
                    f"{what}: title {c['title']['text']!r} leaves its chart ({c['title']}, chart {c['left']}-{c['right']})"
    ctx.close()
    assert charts >= len(LOGS) and bars > 100 and lines > 0, (charts, bars, lines)
