"""The frame every page shares: cached loading, the sidebar source and query picker, and
``?report=`` links. Every page's first line is :func:`current` (or :func:`sidebar_source` on
Run): with a ``pages/`` folder Streamlit runs a page script without app.py on a fresh server
and in AppTest, and widget ids carry the running page's hash, so the picker is drawn from the
page to keep its widget state between runs.
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, Optional

import streamlit as st

from aqe_core.views.query import QueryView
from aqe_core.plain_text import md_text
from aqe_core.server_settings import SettingsError, lens_home, server_settings
from aqe_core.storage import remove_interrupted_saves
from aqe_core.share import ShareError, load_view_state, upload_path
from aqe_core.opening import (
    LoadedSource, SourceError, default_sample, internal_cause, open_on_server, resolve_in_roots,
    sample_sources, server_budget,
)
from ui import state
from ui.listed_source import pick_listed
from aqe_core.source_cache import SourceCache, content_fingerprint
from ui.state import set_source as _set_source

@st.cache_resource(show_spinner=False)
def _source_cache() -> "SourceCache":
    budget = server_budget()
    cache = SourceCache(budget.limit)
    budget.add_reclaimer(cache.reclaim)  # a load short of memory lets cached sources go first
    return cache


def _shared_sources() -> "SourceCache":
    """One cache per server: a source is read once and shared by every session (views are
    read-only data), instead of being copied (st.cache_data) or re-read on every interaction.
    It holds up to the server's memory budget, which loads in progress share with it."""
    cache = _source_cache()
    cache.max_bytes = server_budget().limit
    return cache


def _open_shared(real: str) -> LoadedSource:
    """The source at ``real`` from the cache, else read once (with a progress bar for big
    files). A source that failed is not read again while its bytes and the settings stay the
    same: its message comes back at once (a refusal because the server was busy is not kept)."""
    cache = _shared_sources()
    key = (real, content_fingerprint(real))
    failed_key = (key, server_settings())
    src, _ = cache.open(key, lambda: _read(real), failed_key)  # sessions opening it together: one read
    return src


def _read(real: str) -> LoadedSource:
    owner = _session_id()  # one load at a time per session (aqe_core.readers.load_slots)
    size = os.path.getsize(real) if os.path.isfile(real) else None
    if size and size > 20 * 1024 * 1024:
        bar = st.progress(0.0, text=f"reading {md_text(os.path.basename(real))}")
        src = open_on_server(real, owner=owner, progress=lambda done, total: bar.progress(
            min(1.0, done / (total or size)), text=f"read {done // 2**20} of {(total or size) // 2**20} MiB"))
        bar.empty()
        return src
    return open_on_server(real, owner=owner)


def _session_id() -> Optional[str]:
    """The running session's id (None outside a session)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return getattr(ctx, "session_id", None) if ctx is not None else None


@st.cache_resource(show_spinner=False)
def _start_up(home: str) -> int:
    """Once per server and data directory, before any page reads it: remove the temporary
    files of saves a killed server left (a save in progress in another process is kept)."""
    try:
        return len(remove_interrupted_saves(Path(home)))
    except OSError:
        return 0


def load_with_progress(path: str, own_name: Optional[str] = None) -> Optional[LoadedSource]:
    """Load a source once per server (keyed by its content), with a progress bar for big files
    on the first read. Only paths inside the server's roots open, within the decoding limits.

    ``own_name``: the name this user gave an upload. Uploads are kept once per content, under
    the name of whoever sent those bytes first; what the reader says about the stored file
    (errors, label, warnings) is shown with the user's own name instead."""
    stored = os.path.basename(path)
    try:
        real = str(resolve_in_roots(path))  # before anything looks at the file
        return _named(_open_shared(real), stored, own_name)
    except SourceError as exc:
        msg = _own_words(str(exc), stored, own_name)
        if own_name and msg.startswith(f"{own_name}: "):
            msg = msg[len(own_name) + 2:]  # named once
        what = f"Could not open {md_text(own_name)}" if own_name else "Could not open this source"
        st.error(f"{what}: {md_text(msg)}")
    except OSError as exc:
        st.error(f"Could not open this source: {md_text(exc.strerror or type(exc).__name__)}")
    except Exception as exc:  # noqa: BLE001 - the app must never crash on a bad input (and never echo it)
        st.error(f"Could not open this source (internal error: {md_text(internal_cause(exc))})")
    return None


def _own_words(text: str, stored: str, own_name: Optional[str]) -> str:
    """``text`` with the stored file's name replaced by the user's own name for it."""
    return text.replace(stored, own_name) if own_name and stored and own_name != stored else text


def _named(src: LoadedSource, stored: str, own_name: Optional[str]) -> LoadedSource:
    """The shared source as this user sees it: their file's name in its texts (the views,
    read-only and shared, are the same objects)."""
    if not own_name or own_name == stored:
        return src
    fix = lambda texts: [_own_words(t, stored, own_name) for t in texts]  # noqa: E731 - a one-line closure over this call's names
    return dataclasses.replace(src, label=_own_words(src.label, stored, own_name), warnings=fix(src.warnings),
                               notes=fix(src.notes), incomplete=fix(src.incomplete))


def _apply_report_link() -> None:
    """``?report=<id>``: restore a shared view once per session."""
    rid = st.query_params.get("report")
    if not rid or st.session_state.get(state.REPORT_APPLIED) == rid:
        return
    st.session_state[state.REPORT_APPLIED] = rid
    try:
        shared = load_view_state(rid)
    except ShareError as exc:
        st.session_state[state.REPORT_ERROR] = str(exc)
        return
    src = _apply_shared_source(shared.get("source", {}))
    if shared.get("query_id") is not None:
        st.session_state[state.QUERY_ID] = str(shared["query_id"])
    if shared.get("presets"):
        st.session_state[state.COMPARE_PRESETS] = list(shared["presets"])
    if shared.get("overrides"):
        st.session_state[state.WHATIF_OVERRIDES] = dict(shared["overrides"])
    st.session_state[state.SOURCE_REF] = src


def _apply_shared_source(src: dict) -> dict:
    """Open a shared link's source; returns the reference to keep (``{}`` if refused)."""
    if src.get("kind") == "upload":
        p = upload_path(src.get("digest", ""))
        if p is not None:
            st.session_state[state.SOURCE_PATH] = str(p)
            st.session_state[state.SOURCE_LABEL] = _upload_name(src) or p.name
    elif src.get("kind") == "sample":
        for s in sample_sources():
            if s.key == src.get("key"):
                st.session_state[state.SOURCE_PATH], st.session_state[state.SOURCE_LABEL] = s.path, s.label
                st.session_state[state.SOURCE_REF] = {"kind": "sample", "key": s.key}
    elif src.get("kind") == "path":
        try:  # a shared link opens only what Path on server would
            real = str(resolve_in_roots(src.get("path")))
        except SourceError as exc:
            st.session_state[state.REPORT_ERROR] = str(exc)
            return {}
        st.session_state[state.SOURCE_PATH] = real
        st.session_state[state.SOURCE_LABEL] = src.get("path")
    return src


def _on_sample_pick() -> None:
    """Only an actual change of the sample widget switches the source (a run's capture stays)."""
    x = st.session_state.get(state.SAMPLE_PICK)
    if x is not None:
        _set_source(x.path, x.label, {"kind": "sample", "key": x.key})


def ensure_navigation() -> None:
    """A page opened by URL on a fresh server runs without app.py (Streamlit's legacy pages/
    mode); send it through app.py so navigation, layout and the sidebar are set up."""
    if not st.session_state.get(state.NAVIGATION):
        page = _calling_page()
        if page:  # app.py opens this page once navigation is set up (a shared /plans link stays on Plans)
            st.session_state[state.NAV_TARGET] = page
        st.switch_page("app.py")


def _calling_page() -> Optional[str]:
    """The file name of the ``pages/`` script being run (the first such frame on the stack)."""
    import inspect

    for fr in inspect.stack(0):
        p = Path(fr.filename)
        if p.parent.name == "pages" and p.suffix == ".py":
            return p.name
    return None


def _upload_name(ref: dict) -> Optional[str]:
    """The name the user gave an upload (kept in the source reference, so a shared link shows
    it too), as a plain file name."""
    name = ref.get("name") if ref.get("kind") == "upload" else None
    return (Path(name).name[:200] or None) if isinstance(name, str) else None


def _sync_pickers() -> None:
    """Make the sidebar's pickers show the source in use. A new source (a run's capture, a
    shared link, a past run opened) resets them to its kind; a page's first draw (widget state
    is per page) starts them there too. Set before the widgets are drawn, as Streamlit asks."""
    path = st.session_state.get(state.SOURCE_PATH)
    shown = st.session_state.get(state.PICKERS_SOURCE) or (None, None)
    page = _page_hash()
    if shown == (page, path):
        return  # the user's own edits of the pickers on this page stay
    st.session_state[state.PICKERS_SOURCE] = (page, path)
    if shown[1] != path:
        st.session_state.pop(state.SOURCE_MODE, None)  # a new source: its kind decides
    ref = st.session_state.get(state.SOURCE_REF) or {}
    st.session_state[state.SOURCE_MODE_PICK] = _mode()
    st.session_state[state.SAMPLE_PICK] = next(
        (x for x in sample_sources() if ref.get("kind") == "sample" and x.key == ref.get("key")), None)
    st.session_state[state.SERVER_PATH] = ref.get("path", "") if ref.get("kind") == "path" else ""


def _page_hash() -> Optional[str]:
    """The running page's id (widget state is per page)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return getattr(ctx, "page_script_hash", None) if ctx is not None else None


def _sample_picker() -> None:
    samples = sample_sources()
    if samples:  # no sample shown while the source is not one (a run's capture, an upload, a path)
        st.selectbox("Bundled sample", samples, index=None, placeholder="pick a sample to open it",
                     format_func=lambda x: x.label, key=state.SAMPLE_PICK, on_change=_on_sample_pick)


def _upload_picker() -> None:
    """The upload arrives spooled to disk (ui.upload_spool), never as bytes in the session: it is
    kept from its file, and when it replaces the source the session's earlier uploads go."""
    from ui.upload_spool import drop_other_uploads, keep_upload, upload_refusal, widget_limit_mb

    max_mb = server_settings().max_upload_mb
    up = st.file_uploader("Event log, zipped log directory, or capture", key="upload",
                          max_upload_size=widget_limit_mb(max_mb),
                          help=f"up to {max_mb:g} MB; any Spark codec (zstd, lz4, snappy, lzf), .zip/.gz")
    refused = upload_refusal()
    if refused:
        st.error(f"Upload refused: {md_text(refused)}")
    if up is None:
        return
    try:
        if up.size > server_settings().max_upload_bytes:
            raise ShareError(f"this file is over the server's upload limit of {max_mb:g} MB")
        digest = keep_upload(up)
    except ShareError as exc:
        st.error(md_text(exc))
    else:
        path = str(upload_path(digest))
        if path != st.session_state.get(state.SOURCE_PATH) or up.name != st.session_state.get(state.SOURCE_LABEL):
            drop_other_uploads(up)
            _set_source(path, up.name, {"kind": "upload", "digest": digest, "name": up.name})


def _path_picker() -> None:
    ref = st.session_state.get(state.SOURCE_REF) or {}
    typed = st.text_input("Path to an event log, log directory or capture", key=state.SERVER_PATH)
    if typed and st.button("Open", key="open_path") and typed != ref.get("path"):
        _set_source(typed, typed, {"kind": "path", "path": typed})


MODES = ["Sample", "Upload", "Path on server"]


def _mode() -> str:
    """The Open choice to show: the user's last one, else the kind of the source in use (a
    run's capture is a path), so a page change never shows another source's picker."""
    chosen = st.session_state.get(state.SOURCE_MODE)
    if chosen in MODES:
        return chosen
    kind = (st.session_state.get(state.SOURCE_REF) or {}).get("kind", "sample")
    return {"sample": "Sample", "upload": "Upload"}.get(kind, "Path on server")


def _default_source() -> None:
    if state.SOURCE_PATH not in st.session_state:
        d = default_sample()
        if d is not None:
            st.session_state[state.SOURCE_PATH], st.session_state[state.SOURCE_LABEL] = d.path, d.label
            st.session_state[state.SOURCE_REF] = {"kind": "sample", "key": d.key}


def sidebar_source() -> Optional[LoadedSource]:
    """The source picker shown on every page; returns the loaded source."""
    ensure_navigation()
    try:
        server_settings()  # a broken server.toml stops every page with one clear line
    except SettingsError as exc:
        st.error(f"The server's settings cannot be used: {md_text(exc)}")
        st.stop()
    _start_up(str(lens_home()))
    _apply_report_link()
    _default_source()
    with st.sidebar:
        st.markdown("### Source")
        if st.session_state.get(state.REPORT_ERROR):
            st.error(md_text(st.session_state[state.REPORT_ERROR]))
        _sync_pickers()
        mode = st.radio("Open", MODES, key=state.SOURCE_MODE_PICK, horizontal=True)
        st.session_state[state.SOURCE_MODE] = mode
        {"Sample": _sample_picker, "Upload": _upload_picker}.get(mode, _path_picker)()
        path = st.session_state.get(state.SOURCE_PATH)
        if not path:
            st.info("No source yet: pick a sample, upload a log, or run a query.")
            return None
        ref = st.session_state.get(state.SOURCE_REF) or {}
        own = (st.session_state.get(state.SOURCE_LABEL) or None) if ref.get("kind") == "upload" else None
        src = load_with_progress(path, own)
        st.markdown(f"**In use:** {md_text(st.session_state.get(state.SOURCE_LABEL) or os.path.basename(path), 200)}")
        if src is None:
            return None
        st.caption(md_text(src.label))
    _source_banner(src)
    return src


def _source_banner(src: LoadedSource) -> None:
    """A cut or damaged source says so at the top of the page (not only in Overview's notes):
    its queries may be missing or partial."""
    lines = []
    if src.incomplete:
        lines.append("**This log is incomplete**: events are missing from what was read, so executions may be "
                     "missing or partial. " + "; ".join(md_text(t, 200) for t in src.incomplete[:3]))
    damage = [w for w in src.warnings if w not in src.incomplete]
    if damage:
        more = f" (and {len(damage) - 3} more, listed on Overview)" if len(damage) > 3 else ""
        lines.append("**Read with warnings**: " + "; ".join(md_text(w, 200) for w in damage[:3]) + more)
    if lines:
        st.warning("  \n".join(lines))


def pick_query(src: LoadedSource, where: Any) -> Optional[QueryView]:
    """Sidebar selector of the SQL execution that drives every page, drawn in ``where`` (a
    container of the sidebar, see :func:`current`). It lists every execution, those AQE did not
    apply to too (labelled "no AQE"): a query the Overview's row opens must be one the picker can
    show, or the picker resets it, the row sets it again, and the page reruns forever (issue 38).
    It starts on the first query with an adaptive read. A log listed by query (more executions
    than the server keeps, issue 41) has a picker of its own (:func:`ui.listed_source.pick_listed`)."""
    if src.listing is not None:
        return pick_listed(src, where, _session_id())
    views = src.views
    if not views:
        where.warning("This source holds no SQL executions.")
        return None
    ids = [v.query_id for v in views]
    qp = st.query_params.get("q")
    wanted = st.session_state.get(state.QUERY_ID) or qp
    if wanted not in ids:
        wanted = next((v.query_id for v in views if v.shuffles),
                      next((v.query_id for v in views if v.adaptive), ids[0]))
    key = state.query_pick_key(src.path)
    # set through its state at every run, not with index=: a browser then shows it too, and a page's
    # own picker (a new widget) starts on it instead of on the first query
    st.session_state[key] = wanted
    choice = where.selectbox(
        "Query", ids, key=key, format_func=lambda i: _query_label(next(v for v in views if v.query_id == i)),
        on_change=_query_picked, args=(key,))
    st.session_state[state.QUERY_ID] = choice
    if st.query_params.get("q") != choice:
        st.query_params["q"] = choice
    return next(v for v in views if v.query_id == choice)


def _query_picked(key: str) -> None:
    """A query picked by hand is the query of every page (before the run draws the picker,
    which then shows what :data:`state.QUERY_ID` holds: a row, a link or this pick)."""
    st.session_state[state.QUERY_ID] = st.session_state.get(key)


def _query_label(v: QueryView) -> str:
    desc = v.description.replace("\n", " ")
    sub = f" (sub-execution of #{v.root_execution_id})" if v.root_execution_id is not None else ""
    return f"#{v.query_id} {desc[:40]}" + (" (no AQE)" if not v.adaptive else "") + sub


def current() -> tuple[Optional[LoadedSource], Optional[QueryView]]:
    """Draw the sidebar query and source pickers; the page's source and query (or None).
    The query picker comes first, right under the pages, though it is drawn after the source
    it lists: it is the control used most, and below the source's pickers it sat at the bottom
    edge of a laptop screen."""
    slot = st.sidebar.container()
    src = sidebar_source()
    if src is None:
        return None, None
    return src, pick_query(src, slot)


def approx_note(view: QueryView) -> None:
    if view.source_kind == "eventlog":
        st.caption("From an event log: partition sizes are those after AQE; lines that need pre-AQE or per-map sizes are "
                   "approximate (the log does not hold them). Run the query or load a capture for exact numbers.")
