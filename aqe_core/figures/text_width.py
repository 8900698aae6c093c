"""How wide a line of plot text is, in pixels, before any browser has drawn it.

Plotly draws text at a fixed pixel size, so a label fits its box only if the box was sized from
the text. The widths are the advance widths of DejaVu Sans Bold (the widest of the fonts a
browser falls back to when Arial is missing, the regular weight where it is wider), in ems, for
printable ASCII; any other character counts as one em. Sizes from this table are upper bounds
for Arial and Liberation Sans, so a box sized with them holds its text in every common font.

>>> round(text_px("Exchange", 11), 1)
59.6
>>> fit_text("BroadcastHashJoin Inner BuildRight", 11, 120)
'BroadcastHashJoi…'
"""
from __future__ import annotations

#: ems per character from " " (32) to "~" (126)
_EM = (
    0.348, 0.456, 0.521, 0.838, 0.696, 1.002, 0.872, 0.306, 0.457, 0.457, 0.523, 0.838, 0.38, 0.415, 0.38,
    0.365, 0.696, 0.696, 0.696, 0.696, 0.696, 0.696, 0.696, 0.696, 0.696, 0.696, 0.4, 0.4, 0.838, 0.838,
    0.838, 0.58, 1.0, 0.774, 0.762, 0.734, 0.83, 0.683, 0.683, 0.821, 0.837, 0.372, 0.372, 0.775, 0.637,
    0.995, 0.837, 0.85, 0.733, 0.85, 0.77, 0.72, 0.682, 0.812, 0.774, 1.103, 0.771, 0.724, 0.725, 0.457,
    0.365, 0.457, 0.838, 0.5, 0.5, 0.675, 0.716, 0.593, 0.716, 0.678, 0.435, 0.716, 0.712, 0.343, 0.343,
    0.665, 0.343, 1.042, 0.712, 0.687, 0.716, 0.716, 0.493, 0.595, 0.478, 0.712, 0.652, 0.924, 0.645,
    0.652, 0.582, 0.712, 0.365, 0.712, 0.838,
)
ELLIPSIS = "…"


def _em(ch: str) -> float:
    c = ord(ch)
    return _EM[c - 32] if 32 <= c <= 126 else 1.0


def text_px(text: str, size: float) -> float:
    """Width in pixels of ``text`` drawn at font ``size`` (an upper bound, see the module)."""
    return size * sum(_em(ch) for ch in text)


def fit_text(text: str, size: float, max_px: float) -> str:
    """``text``, cut with an ellipsis where it would be wider than ``max_px``."""
    if text_px(text, size) <= max_px:
        return text
    room = max_px - size * _em(ELLIPSIS)
    used = 0.0
    for i, ch in enumerate(text):
        used += size * _em(ch)
        if used > room:
            return text[:i].rstrip() + ELLIPSIS
    return text
