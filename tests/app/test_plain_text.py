"""Untrusted text stays text: the markdown escape used by the pages, the HTML escape of figures,
and the report (the browser test in tests/browser/test_browser_safety.py checks what Chromium
renders)."""
from __future__ import annotations

import re

import pytest

from aqe_core.plain_text import WORD_JOINER, md_text

HOSTILE = [
    "![x](http://127.0.0.1:9/px.png)",
    '<img src="http://127.0.0.1:9/img.png"> <script>alert(1)</script>',
    "[click](javascript:alert(1)) <http://evil.example> https://evil.example/a www.evil.example me@evil.example",
    ":red[red] :material/home: :smile: $x^2$ $$\\int$$ **bold** _it_ ~~strike~~ `code`",
    "# heading\n- item\n1. one\n> quote\n    code block\n| a | b |\n|---|---|\n---",
    "&lt;b&gt; &amp; &#60;img&#62; \\*not bold\\*",
    "{{ x }} ^sup^ ==mark== [^1] <!-- c -->",
]
_PUNCT = set(r"\`*_{}[]()#+-.!|<>~$:&/@")


def _unescape(s: str) -> str:
    """What CommonMark shows for an escaped string (a backslash before punctuation disappears)."""
    return re.sub(r"\\(.)", r"\1", s).replace(WORD_JOINER, "")


@pytest.mark.parametrize("text", HOSTILE)
def test_md_text_escapes_every_markdown_character_and_reads_back_as_the_original(text):
    out = md_text(text)
    assert "\n" not in out
    assert _unescape(out) == " ".join(text.split())
    # every special character is escaped (no bare one reaches the markdown parser)
    bare = re.sub(r"\\.", "", out)
    assert not (set(bare) & _PUNCT), set(bare) & _PUNCT


def test_md_text_breaks_bare_urls_and_addresses_so_they_are_not_linked():
    out = md_text("see http://a.example/x, WWW.b.example and c@d.example").replace("\\", "")
    assert "://" not in out and "www." not in out.lower() and "@d" not in out
    assert out.replace(WORD_JOINER, "") == "see http://a.example/x, WWW.b.example and c@d.example"


def test_md_text_cuts_and_handles_odd_values():
    assert md_text(None) == ""
    assert md_text(42) == "42"
    assert md_text(ValueError("bad *value*")) == "bad \\*value\\*"
    assert _unescape(md_text("x" * 200, 100)) == "x" * 99 + "…"
    assert md_text("  a \t\n b  ") == "a b"


def test_histogram_titles_and_labels_are_html_escaped():
    from aqe_core.views.query import ShuffleView
    from aqe_core.figures.histograms import histogram_figure, partition_bars_figure

    sv = ShuffleView(key="k", label='<a href="http://x/">x</a><img src="http://x/i.png">', sizes_after=[1, 2, 300])
    for fig in (histogram_figure(sv, which="after"), partition_bars_figure(sv, which="after")):
        title = fig.layout.title.text
        assert "<a" not in title and "<img" not in title and "&lt;img src=" in title


def test_report_escapes_a_markdown_image_and_html_in_the_app_name_and_description():
    from dataclasses import replace

    from aqe_core.report import build_report
    from aqe_core.opening import default_sample, load_source

    src = load_source(default_sample().path)
    view = replace(next(v for v in src.views if v.shuffles), description='![d](http://127.0.0.1:9/d.png) <b>desc</b>')
    app = '![x](http://127.0.0.1:9/px.png) <img src="http://127.0.0.1:9/img.png"> [l](http://127.0.0.1:9/)'
    html_doc = build_report(view, source_label=app)
    assert '<img src="http://127.0.0.1:9' not in html_doc and "<b>desc</b>" not in html_doc
    assert "![x](http://127.0.0.1:9/px.png) &lt;img src=&quot;http://127.0.0.1:9/img.png&quot;&gt;" in html_doc
    assert "![d](http://127.0.0.1:9/d.png) &lt;b&gt;desc&lt;/b&gt;" in html_doc
    assert "default-src 'none'" in html_doc  # and the CSP forbids any fetch anyway
