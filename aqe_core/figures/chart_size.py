"""How big a partition chart is drawn, and what fits in it at that size.

The partition charts carry no width of their own: the app stretches them to their container and
the report to its page. They are laid out for the width they are drawn at by default:
:data:`WIDTH_PX`, plotly's (and Streamlit's) width for a figure without one, which the Partitions
page's container on a wide page and the report's page exceed; a compact chart (a column of the
Compare page) for :data:`COMPACT_WIDTH_PX`. Drawn wider, bars only get wider and titles roomier.

Every size here is pixels. The plot's left margin is sized from its tick labels (the project's
upper bound of text width, :func:`~aqe_core.figures.text_width.text_px`), so plotly's automargin
never has to widen it and the plot width is known before the browser draws: bars are then sized
to at least :data:`MIN_BAR_PX`, and titles wrapped to the width.

>>> wrap_words("Exchange hashpartitioning(a#1, b#2, 128), ENSURE_REQUIREMENTS", 13, 260)
['Exchange hashpartitioning(a#1,', 'b#2, 128),', 'ENSURE_REQUIREMENTS']
>>> wrap_words("x" * 30, 13, 100)
['xxxxxxxxxxx', 'xxxxxxxxxxx', 'xxxxxxxx']
"""
from __future__ import annotations

import html
import math
from typing import Any, Sequence

from aqe_core.figures.text_width import text_px

__all__ = ["COMPACT_WIDTH_PX", "MIN_BAR_PX", "WIDTH_PX", "left_margin", "plot_width", "title_layout",
           "width_of", "wrap_words"]

#: the width a chart is drawn at when nothing sets one (plotly.js's and Streamlit's default)
WIDTH_PX = 700
#: a compact chart's width: one of three Compare columns on a 1440-pixel page
COMPACT_WIDTH_PX = 300
#: the narrowest bar drawn at the default width (3 px is the floor a bar still reads at; the
#: extra pixel keeps bars readable in a container a little narrower than the default)
MIN_BAR_PX = 4.0
#: tick labels' font size (plotly's default)
TICK_FONT = 12
#: the title's distance from the figure's left, top and right edges
TITLE_PAD = 10
#: plotly's line height, in font sizes, of text in several lines
LINE_HEIGHT = 1.3


def width_of(compact: bool) -> int:
    """The width a chart is laid out for."""
    return COMPACT_WIDTH_PX if compact else WIDTH_PX


def plot_width(width: float, margin_l: float, margin_r: float) -> float:
    """The plot area's width in a figure ``width`` wide."""
    return max(width - margin_l - margin_r, 1.0)


def left_margin(ticktext: Sequence[str], *, least: int = 0) -> int:
    """A left margin holding a y axis's tick labels and its (rotated) title: wide enough that
    plotly's automargin leaves it as set (measured in Chromium: labels + about 27 px)."""
    widest = max((text_px(t, TICK_FONT) for t in ticktext), default=0.0)
    return max(least, int(math.ceil(widest + 30)))


def wrap_words(text: str, size: float, max_px: float) -> list[str]:
    """``text`` in lines no wider than ``max_px`` at font ``size``, broken between words (a word
    wider than a line alone is broken where it reaches the edge)."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        candidate = f"{line} {word}" if line else word
        if text_px(candidate, size) <= max_px:
            line = candidate
            continue
        if line:
            lines.append(line)
        while text_px(word, size) > max_px and len(word) > 1:
            cut = max(1, max(k for k in range(1, len(word) + 1) if text_px(word[:k], size) <= max_px or k == 1))
            lines.append(word[:cut])
            word = word[cut:]
        line = word
    if line or not lines:
        lines.append(line)
    return lines


def title_layout(text: str, *, width: int, size: float) -> tuple[dict[str, Any], int]:
    """A plotly title wrapped for a figure ``width`` wide (escaped, lines joined with ``<br>``),
    placed at the figure's top left, and the pixels it takes from the top."""
    lines = wrap_words(text, size, width - 2 * TITLE_PAD)
    title = dict(text="<br>".join(html.escape(t) for t in lines), font=dict(size=size), x=0, xref="container",
                 xanchor="left", y=1, yref="container", yanchor="top", pad=dict(l=TITLE_PAD, t=8))
    return title, int(math.ceil(8 + LINE_HEIGHT * size * len(lines)))
