"""Untrusted strings shown as plain text inside Streamlit markdown.

App names, SQL descriptions, node names, warnings, file names and error messages come from logs,
captures and uploads written by strangers. Streamlit renders markdown (images, links, LaTeX,
``:color[...]`` directives, HTML entities) in ``st.markdown``/``st.caption``/``st.warning``/...,
headings, and widget labels and help; a markdown image there is fetched by every viewer's
browser. Streamlit has no escaping helper, so this is the one place that makes such a string
literal text: every ASCII punctuation character that markdown or Streamlit's extensions give a
meaning to is backslash-escaped (CommonMark shows ``\\x`` as ``x``), line breaks are folded to
spaces so no line can start a heading, list, table or code block, and an invisible word joiner
(U+2060) goes into ``://``, ``www.`` and ``@``: GitHub-flavoured markdown turns bare URLs and
e-mail addresses into links after escapes are resolved, so escaping alone cannot stop it.

Use :func:`md_text` for an untrusted value inside a markdown string of ours (``f"**{md_text(x)}**"``);
use ``st.text``/``st.code``/``st.dataframe`` for untrusted text on its own (they never render).
"""
from __future__ import annotations

import re
from typing import Any

# every character CommonMark allows to be backslash-escaped that markdown, GFM (tables, strike,
# autolinks), Streamlit's LaTeX ($), directives (:red[...], :material/x:) or HTML could use
_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&/@])")
_SPACE = re.compile(r"\s+")
_AUTOLINK = re.compile(r"(?i)(?<=:)(?=//)|(?<=www)(?=\.)|(?<=@)")
WORD_JOINER = "\u2060"


def md_text(value: Any, max_len: int | None = None) -> str:
    """``value`` as literal text for Streamlit markdown (one line; cut to ``max_len`` characters first)."""
    text = _SPACE.sub(" ", "" if value is None else str(value)).strip()
    if max_len is not None and len(text) > max_len:
        text = text[: max(0, max_len - 1)] + "…"
    text = _AUTOLINK.sub(WORD_JOINER, text)
    return _SPECIAL.sub(r"\\\1", text)
