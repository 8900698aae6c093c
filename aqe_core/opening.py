"""Sources the app and reports open: bundled samples, event logs, captures, by path.

``load_source(path)`` tells a capture from an event log by its bytes and returns the same
:class:`LoadedSource` for both, so pages never care where a query came from. Errors come back
as :class:`SourceError` with one line for people; nothing else escapes, whatever the bytes.

On a shared server the app opens sources with :func:`open_on_server`: the path must resolve
(symlinks followed) inside :meth:`ServerSettings.all_roots` (:func:`resolve_in_roots`), is
then opened once by descriptor, walked down from its root without following links, and read
only from that descriptor (:mod:`aqe_core.readers.eventlog.opened`: no second lookup a swapped
symlink could redirect, regular files only). Decoding is bounded by :func:`server_limits`,
each source by the per-source limits of the server settings (executions, plan nodes, task
values, wall time), and all sources together by one memory budget and a number of loads at
once (:mod:`aqe_core.readers.budget`). An event log past ``max_executions`` (a long-running
application's) opens listed by query instead, each execution's view read again when asked
(issue 41, :attr:`LoadedSource.listing`). The CLI opens the user's own files unconfined.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator, Optional, Sequence, TypeVar

from aqe_core.model.log_release import release_of
from aqe_core.engine.results import QueryResult
from aqe_core.engine.simulate import SimulationReport
from aqe_core.model.capture import Capture, CaptureFormatError
from aqe_core.readers.capture_file import DEFAULT_MAX_CAPTURE_BYTES, load_capture, looks_like_capture, starts_like_capture
from aqe_core.readers.eventlog import EventLogError, load
from aqe_core.readers.budget import EXEC_BYTES, NODE_BYTES, ListingMeter, LoadMeter, MemoryBudget, drop_frames
from aqe_core.readers.load_slots import LoadSlots, Slot
from aqe_core.readers.eventlog.errors import DEFAULT_LIMITS, BudgetExceeded, Limits, LimitExceeded, internal_cause
from aqe_core.readers.eventlog.focus import Focus
from aqe_core.readers.eventlog.listener_events import listener_capture
from aqe_core.readers.eventlog.opened import OUTSIDE_ROOTS, Confined, Node, Roots, Unconfined
from aqe_core.server_settings import SAMPLES_DIR, server_settings
from aqe_core.views.from_capture import capture_label, views_from_capture
from aqe_core.views.from_eventlog import carry_log_facts, view_from_execution
from aqe_core.listing_consumers import OneExecution, handing
from aqe_core.views.listed_queries import ListedQueries
from aqe_core.views.query import QueryView
from aqe_core.views.query_listing import QueryListing


ProgressFn = Callable[[int, Optional[int]], None]
T = TypeVar("T")


class SourceError(ValueError):
    """A source that cannot be opened; the message is one clear line."""


_LIMIT_HINT = "the server's limits are max_decompressed_mb and max_decompress_s in server.toml"


def resolve_in_roots(path: "str | os.PathLike[str]", roots: Optional[Sequence["str | os.PathLike[str]"]] = None) -> Path:
    """``path`` with symlinks resolved, if that lies inside one of ``roots`` (default: the
    server's :meth:`~aqe_core.server_settings.ServerSettings.all_roots`); else
    :class:`SourceError` with a message that does not tell whether the path exists."""
    if roots is None:
        roots = server_settings().all_roots()
    text = os.fspath(path) if isinstance(path, os.PathLike) else path
    if not isinstance(text, str) or not text.strip() or "\x00" in text:
        raise SourceError(OUTSIDE_ROOTS)
    try:
        real = Roots([os.fspath(r) for r in roots]).resolve(os.path.expanduser(text.strip()))
    except (OSError, ValueError):
        real = None
    if real is None:
        raise SourceError(OUTSIDE_ROOTS)
    return Path(real)


def server_limits() -> Limits:
    """Decoding limits for sources opened in the app, from the server settings. A line is
    parsed whole into objects about ten times its size, outside the budget's estimate: lines
    are held to 1/64 of the memory budget, at least 16 MiB (32 MiB at the default budget; real
    plans are a few MB)."""
    s = server_settings()
    return Limits(max_decompressed_bytes=s.max_decompressed_bytes, max_seconds=s.max_decompress_s,
                  max_task_slots=s.max_task_slots, max_line_bytes=budget_line_bytes(s.memory_budget_bytes))


def budget_line_bytes(budget: int) -> int:
    """The longest line read under a memory budget of ``budget`` bytes (see :func:`server_limits`)."""
    return max(16 << 20, min(Limits().max_line_bytes, budget // 64))


def scan_limits() -> Limits:
    """Decoding limits for the fleet scan: the CLI's, with more ended executions held before the
    reader spills them (``spill_after``). Spilling a log of tens of MB costs a tenth of its read
    time and saves little: 1,133 executions (a 109 MB log) read in 95 MB unspilled, 84 MB with
    the CLI's 64; past 512 a longer log still spills, so a scan's memory stays flat."""
    return Limits(spill_after=512)


_BUDGET = MemoryBudget(0)
#: the server's load slots (their number follows ``max_concurrent_loads``)
_SLOTS = LoadSlots(2)


def server_budget() -> MemoryBudget:
    """The memory budget every load and every loaded source of this server process share
    (its limit follows ``memory_budget_mb``)."""
    _BUDGET.limit = server_settings().memory_budget_bytes
    return _BUDGET


@contextmanager
def _load_slot(n: int, wait_s: float, owner: Optional[str] = None) -> Iterator[Slot]:
    """One of the server's ``n`` load slots (the CPU budget), shared fairly
    (:mod:`aqe_core.readers.load_slots`): after ``owner``'s earlier load has ended, given up to
    waiting loads at checkpoints; waits up to ``wait_s`` in all."""
    _SLOTS.resize(n)
    with _SLOTS.load(owner, wait_s) as slot:
        yield slot


def server_meter(slot: Optional[Slot] = None) -> LoadMeter:
    """A new load's meter: the per-source limits of the server settings, charged to
    :func:`server_budget`; at its checkpoints ``slot`` may pause it for other loads (the time
    waited is not counted against ``max_load_s``)."""
    s = server_settings()
    return LoadMeter(server_budget(), max_executions=s.max_executions, max_plan_nodes=s.max_plan_nodes,
                     max_task_slots=s.max_task_slots, max_seconds=s.max_load_s,
                     pause=None if slot is None else slot.checkpoint)


def listing_meter(slot: Optional[Slot] = None) -> ListingMeter:
    """:func:`server_meter` for a log read in listing mode: no limit on executions (that is what
    listing passes), the others on what the reader holds, ``max_listing_s`` of time."""
    s = server_settings()
    return ListingMeter(server_budget(), max_plan_nodes=s.max_plan_nodes, max_task_slots=s.max_task_slots,
                        max_seconds=s.max_listing_s, pause=None if slot is None else slot.checkpoint)


def open_on_server(path: str, *, progress: Optional["ProgressFn"] = None, owner: Optional[str] = None,
                   listing: bool = True) -> "LoadedSource":
    """:func:`load_source` as the app does it: confined to the roots, bounded by the limits,
    one of ``max_concurrent_loads`` at once, charged to the server's memory budget while the
    source lives (its estimate in :attr:`LoadedSource.memory_bytes`).

    ``owner`` (a session's id, ``"mcp"``): one load at a time per owner, a second one waits
    for the first to end; None: no such limit. Loads share the slots by turns, so a small
    source is not queued behind bombs (:mod:`aqe_core.readers.load_slots`).

    An event log of more than ``max_executions`` executions (a long-running application's,
    issue 41) is read again in listing mode when ``listing``: the source lists its queries
    (:attr:`LoadedSource.listing`), each execution's view built on demand; False: refused (the
    MCP server lists it too, its tools reading one execution at a time)."""
    s = server_settings()
    roots = [str(r) for r in s.all_roots()]
    real = str(resolve_in_roots(path, roots))
    try:
        with _load_slot(s.max_concurrent_loads, s.max_load_s, owner) as slot:
            try:
                src, meter = _metered_load(real, roots, progress, server_meter(slot))
            except SourceRefused as exc:
                if exc.setting != "max_executions" or not listing:
                    raise
                src, meter = _list_instead(real, roots, progress, listing_meter(slot), exc)
    except BudgetExceeded as exc:
        raise refusal(exc) from None
    if src.listing is not None:
        src.listing.opener = _view_opener(real, roots)
    src.memory_bytes = meter.hold_until_freed(src)
    return src


def _metered_load(real: str, roots: list[str], progress: Optional[ProgressFn], meter: LoadMeter,
                  **kw: Any) -> tuple["LoadedSource", LoadMeter]:
    """:func:`load_source` on the server; a failed load's charge given back at once."""
    try:
        limits = server_limits()
        if isinstance(meter, ListingMeter):  # (flat memory, as long as the log: decoding has max_listing_s too)
            limits = replace(limits, max_seconds=max(limits.max_seconds or 0, server_settings().max_listing_s))
        return load_source(real, progress=progress, limits=limits, roots=roots, meter=meter, **kw), meter
    except BaseException as exc:
        drop_frames(exc)  # the failed load's lines and strings go before its charge does
        meter.release()
        raise


def _list_instead(real: str, roots: list[str], progress: Optional[ProgressFn], meter: ListingMeter,
                  first: "SourceRefused") -> tuple["LoadedSource", LoadMeter]:
    """The log ``first`` refused for its executions, listed by query; a refusal of the listing
    says the app tried (a capture is not listed: ``first`` stands)."""
    try:
        return _metered_load(real, roots, progress, meter, listing=True)
    except _NotListed:
        raise first from None
    except SourceRefused as exc:
        raise SourceRefused(f"refused: this log holds more than {server_settings().max_executions:,} SQL executions,"
                            f" so the app lists its queries instead, and listing it stopped: {exc.reason}; the limit"
                            f" is {exc.setting} in server.toml{_CLI_HINT}", exc.transient, exc.setting, exc.reason) from None


def _view_opener(real: str, roots: list[str]) -> Callable[..., Optional[QueryView]]:
    """How a listed source opens one execution (:class:`ListedQueries`): the log read again in
    listing mode on the server, that execution's view kept and charged while it lives."""
    def open_view(eid: str, progress: Optional[ProgressFn] = None, owner: Optional[str] = None) -> Optional[QueryView]:
        s = server_settings()
        try:
            with _load_slot(s.max_concurrent_loads, s.max_load_s, owner) as slot:
                one, meter = _metered_load(real, roots, progress, listing_meter(slot), execution=eid)
            view = one.views[0] if one.views else None
            if view is None:
                meter.release()
                return None
            try:
                meter.settle(view_bytes(view))  # (the reader gave back what it read; the view stays)
            except BudgetExceeded:
                meter.release()
                raise
        except BudgetExceeded as exc:
            raise refusal(exc) from None
        meter.hold_until_freed(view)
        return view
    return open_view


def view_bytes(view: QueryView) -> int:
    """A view's estimate in the budget's terms: an execution and its plans' nodes."""
    plans = (view.initial_plan, *view.plan_versions, view.final_plan)
    return EXEC_BYTES + NODE_BYTES * sum(sum(1 for _ in p.walk()) for p in plans if p is not None)


class SourceRefused(SourceError):
    """A server limit refused the source; ``transient``: other loads held the server (the same
    source may open later), else the source itself is past the limit."""

    def __init__(self, message: str, transient: bool = False, setting: str = "", reason: str = ""):
        super().__init__(message)
        self.transient, self.setting, self.reason = transient, setting, reason


class _NotListed(SourceError):
    """Listing mode asked of a source that is not an event log (a capture)."""


_CLI_HINT = ("; a long-running application's log lists its queries in flat memory with `python -m aqe_core"
             " inspect LOG --queries`, and one execution opens with `python -m aqe_core explain LOG --execution N`")


def refusal(exc: BudgetExceeded) -> SourceRefused:
    """The one line shown for a source a server limit stopped, naming the setting."""
    where = "" if exc.setting.startswith("--") else " in server.toml"  # (the CLI's --budget)
    more = _CLI_HINT if exc.setting == "max_executions" else ""
    return SourceRefused(f"refused: {exc}; the limit is {exc.setting}{where}{more}", exc.transient, exc.setting, str(exc))


def read_checked_files(folder: "str | os.PathLike[str]", suffix: str, read: Callable[[BinaryIO], T],
                       roots: Optional[Sequence["str | os.PathLike[str]"]] = None) -> list[T]:
    """``read(file)`` for every regular file ``*suffix`` (not hidden) in ``folder``, which must
    lie inside ``roots`` (default: the server's), as :func:`open_on_server` opens: the folder
    by descriptor from its root without following links, each file under the folder's
    descriptor (a FIFO or a swapped-in link is refused, never waited on or followed)."""
    root_paths = [os.fspath(r) for r in (server_settings().all_roots() if roots is None else roots)]
    walker = Confined(Roots(root_paths))
    try:
        node = walker.open(str(resolve_in_roots(folder, root_paths)))
        try:
            if not node.is_dir:
                raise SourceError(f"{os.path.basename(node.path)} is not a folder")
            out = []
            for name in walker.listdir(node):
                if name.endswith(suffix) and not name.startswith((".", "_")):
                    part = walker.child(node, name)
                    try:
                        if not part.is_dir:
                            out.append(read(part.reader()))
                    finally:
                        part.close()
            return out
        finally:
            node.close()
    except EventLogError as exc:
        raise SourceError(str(exc)) from None


@dataclass
class LoadedSource:
    kind: str  # "eventlog" | "capture"
    label: str
    path: str
    spark_version: Optional[str]
    views: list[QueryView] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    app_id: Optional[str] = None  # the Spark application (event logs)
    app_name: Optional[str] = None  # its spark.app.name: one job's runs share it (a fleet's trend follows it)
    app_start_ms: Optional[int] = None  # when the application started (epoch ms)
    #: why events are missing (a cut or damaged part, no ApplicationEnd); also in warnings or notes
    incomplete: list[str] = field(default_factory=list)
    #: estimated memory held (charged to the server's budget while this object lives; 0: not charged)
    memory_bytes: int = 0
    #: ``plans=False`` only: the replay behind each exact view, by query id (the fleet scan
    #: compares every preset with it instead of replaying what Spark did again)
    replays: dict[str, QueryResult] = field(default_factory=dict)
    #: a log of more than ``max_executions`` executions: its queries listed, ``views`` empty, each
    #: execution's view built when asked (issue 41; :func:`open_on_server`)
    listing: Optional[ListedQueries] = None

    def view(self, query_id: str) -> Optional[QueryView]:
        """The view of execution ``query_id``; a listed source reads it from the log again (its
        events alone; raises :class:`SourceError` when the server refuses that read)."""
        if self.listing is not None:
            return self.listing.view(str(query_id))
        return next((v for v in self.views if v.query_id == str(query_id)), None)


@dataclass(frozen=True)
class Sample:
    key: str
    label: str
    path: str
    kind: str


def sample_sources() -> list[Sample]:
    """Bundled samples: captures first (they hold the most), then event logs per manifest."""
    out: list[Sample] = []
    cap_dir = SAMPLES_DIR / "captures"
    cap_manifest = _read_manifest(cap_dir / "MANIFEST.json")
    if cap_dir.is_dir():
        for p in sorted(cap_dir.iterdir()):
            if p.suffix in (".json", ".gz") and not p.name.startswith("MANIFEST"):
                entry: dict[str, Any] = next((e for e in cap_manifest.values() if e.get("file") == p.name), {})
                version = entry.get("spark_version") or p.name.split("-", 1)[0]
                what = entry.get("description") or p.name.split(".json")[0]
                out.append(Sample(f"capture:{p.name}", f"capture (Spark {version}): {what}", str(p), "capture"))
    for key, entry in _read_manifest(SAMPLES_DIR / "eventlogs" / "MANIFEST.json").items():
        files = entry.get("files") or []
        path = SAMPLES_DIR / "eventlogs" / files[0] if files else None
        if path is not None and path.exists():
            out.append(Sample(f"eventlog:{key}", f"event log: {entry.get('description', key)}", str(path), "eventlog"))
    return out


def _read_manifest(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def default_sample() -> Optional[Sample]:
    """The sample the app opens on: the Spark 4.3 rolling event log if present (no JVM needed)."""
    samples = sample_sources()
    for s in samples:
        if "rolling" in s.key:
            return s
    return samples[0] if samples else None


def load_source(path: str, *, progress: Optional[ProgressFn] = None, limits: Optional[Limits] = None,
                roots: Optional[Sequence[str]] = None, meter: Optional[LoadMeter] = None,
                plans: bool = True, execution: Optional[str] = None, listing: bool = False) -> LoadedSource:
    """Open an event log or a capture and build its views. Raises only :class:`SourceError`.
    ``listing``: an event log's queries only (:attr:`LoadedSource.listing`, no views), read in
    listing mode in flat memory.
    ``execution``: an event log's one execution (its id): the log is read in listing mode, that
    execution's events alone (the others' skipped unparsed, :mod:`~aqe_core.readers.eventlog.focus`),
    its view built as it leaves the reader, so one batch of a log of a million opens in flat
    memory and seconds (issue 41).

    ``limits`` bound decoding (default: the reader's generous CLI limits); ``roots``, when
    given, confine every file read; ``meter`` counts the source against per-source limits and a
    memory budget (the app passes all three, see :func:`open_on_server`). ``plans=False``: what
    the fleet scan's rows read: an event log's views without their initial plan and plan versions
    (:func:`aqe_core.views.from_eventlog.view_from_execution`), exact views with only the first
    and last plan AQE posted, and the replays behind exact views kept (``replays``)."""
    try:
        return _load_source(path, progress, limits, roots, meter, plans, execution, listing)
    except SourceError:
        raise
    except BudgetExceeded as exc:
        raise refusal(exc) from None
    except Exception as exc:  # noqa: BLE001 - the last line of defence; the fuzz tests keep this unreached
        raise SourceError(f"cannot open this source (internal error: {internal_cause(exc)})") from None



def _load_source(path: str, progress: Optional[ProgressFn], limits: Optional[Limits],
                 roots: Optional[Sequence[str]], meter: Optional[LoadMeter], plans: bool = True,
                 execution: Optional[str] = None, listing: bool = False) -> LoadedSource:
    p = resolve_in_roots(path, roots) if roots is not None else Path(path)
    if roots is None and not p.exists():
        raise SourceError(f"no such file or directory: {path}")
    try:  # opened once: everything below reads this descriptor, never the path again
        node = (Confined(Roots(list(roots))) if roots is not None else Unconfined()).open(str(p))
    except EventLogError as exc:
        raise SourceError(str(exc)) from None
    try:
        is_capture = not node.is_dir and starts_like_capture(node.reader())
    except OSError as exc:
        node.close()
        raise SourceError(f"cannot read {p.name}: {exc.strerror or type(exc).__name__}") from None
    if is_capture and listing:
        node.close()
        raise _NotListed("a capture is not listed")
    if is_capture:
        try:
            return _metered_capture(_open_capture(node, limits, keep_replays=not plans, meter=meter), meter)
        finally:
            node.close()
    if meter is not None and meter.budget is not None:
        if limits is None:  # the CLI's --budget: lines held to what the budget allows, as on a server
            limits = Limits(max_line_bytes=budget_line_bytes(meter.budget.limit))
        meter.reserve(2 * limits.max_line_bytes)  # the line in hand and its parse, beside the counts
    one = OneExecution(execution, plans) if execution is not None else None
    lister = QueryListing() if listing and one is None else None
    focus = Focus(int(execution)) if execution is not None and execution.isascii() and execution.isdigit() \
        and len(execution) < 19 else None
    # (the same file again, for an execution whose start the log lacks: read whole, as a listing)
    again = Node(node.path, os.dup(node.fd), node.is_dir, node.size) if focus is not None else None
    try:
        log = load(node, progress=progress, roots=list(roots) if roots is not None else None, meter=meter,
                   limits=limits if limits is not None else DEFAULT_LIMITS, hand_over=handing(one, lister, meter),
                   focus=focus)
        if again is not None and focus is not None and not focus.started:
            one = OneExecution(execution, plans)  # type: ignore[arg-type]
            log, again = load(again, progress=progress, roots=list(roots) if roots is not None else None, meter=meter,
                              limits=limits if limits is not None else DEFAULT_LIMITS, hand_over=one), None
    except BudgetExceeded:
        raise
    except LimitExceeded as exc:
        raise SourceError(f"{exc}" + (f"; {_LIMIT_HINT}" if roots is not None else "")) from None
    except EventLogError as exc:
        raise SourceError(str(exc)) from None
    except OSError as exc:
        raise SourceError(f"cannot read {p.name}: {exc.strerror or type(exc).__name__}") from None
    finally:
        if again is not None:
            again.close()
    release = release_of(log)  # (the log's own evidence: a vendor runtime, else "release unknown")
    views, notes = one.views if one is not None else _views(log, meter, plans), list(log.notes)
    if one is not None and one.kept is not None:
        log.executions = {one.kept.id: one.kept}
    engines = Counter(v.engine for v in views if v.engine)  # (a vendor runtime or native engine: engine_view)
    label = (f"{log.application.name or p.name} ({log.application.id or '?'}), {release.label}"
             + (f", run by {engines.most_common(1)[0][0]}" if engines else ""))
    if lister is not None:
        return _listed(lister, log, str(p), label, release.apache, limits, roots)
    exact = listener_capture(log, versions=plans)
    if meter is not None:
        meter.check_time()
    replays: dict[str, QueryResult] = {}
    if exact is not None:
        exact_views, report = views_from_capture(exact)
        if not plans:
            replays = _replays(exact_views, report)
        by_id = {v.query_id: v for v in exact_views}
        for v in views:
            if v.query_id in by_id:
                carry_log_facts(v, by_id[v.query_id])
        views = [by_id.pop(v.query_id, v) for v in views] + ([] if one is not None else list(by_id.values()))
        label += f"; listener: {len(exact_views)} executions exact ({report.agreement.summary()})"
        notes += report.notes
    return _log_source(log, label, str(p), release.apache, views, notes, replays=replays)


def _log_source(log: Any, label: str, path: str, spark: Optional[str], views: list[QueryView], notes: list[str],
                **extra: Any) -> LoadedSource:
    """An event log's source: the application's facts and the log's warnings around ``views``."""
    return LoadedSource("eventlog", label, path, spark, views, warnings=list(log.warnings), notes=notes,
                        app_id=log.application.id, app_name=log.application.name,
                        app_start_ms=log.application.start_time, incomplete=list(log.cut), **extra)


def _listed(lister: QueryListing, log: Any, path: str, label: str, spark: Optional[str], limits: Optional[Limits],
            roots: Optional[Sequence[str]]) -> LoadedSource:
    """A listed log's source: its groups, no views; an execution opens with ``limits`` and ``roots``
    and no meter (:func:`open_on_server` puts a metered opener in)."""
    groups = lister.groups()
    label += f"; listed by query: {lister.executions:,} SQL executions of {len(groups):,} queries"

    def open_view(eid: str, progress: Optional[ProgressFn] = None, owner: Optional[str] = None) -> Optional[QueryView]:
        one = load_source(path, progress=progress, limits=limits, roots=roots, execution=eid)
        return one.views[0] if one.views else None
    return _log_source(log, label, path, spark, [], list(log.notes), listing=ListedQueries(groups, lister.executions, open_view))


def _views(log, meter: Optional[LoadMeter], plans: bool = True) -> list[QueryView]:
    """:func:`views_from_eventlog`, within the meter's wall time."""
    out = []
    for ex in log.executions_by_id():
        if meter is not None:
            meter.check_time()
        out.append(view_from_execution(log, ex, plans=plans))
    return out


def _metered_capture(src: LoadedSource, meter: Optional[LoadMeter]) -> LoadedSource:
    """A capture's executions and plan nodes counted once its views are built (its decoded
    size is capped already; this charges it to the budget and the per-source limits)."""
    if meter is not None:
        for v in src.views:
            meter.execution()
            for plan in (v.initial_plan, *v.plan_versions, v.final_plan):
                if plan is not None:
                    meter.nodes(sum(1 for _ in plan.walk()))
            meter.check_time()
    return src


def _open_capture(node: Node, limits: Optional[Limits], keep_replays: bool = False,
                  meter: Optional[LoadMeter] = None) -> LoadedSource:
    """A capture's views, decoding bounded by ``limits`` (and the meter's checkpoints); errors
    as :class:`SourceError`."""
    max_bytes = DEFAULT_MAX_CAPTURE_BYTES if limits is None else min(DEFAULT_MAX_CAPTURE_BYTES, limits.max_decompressed_bytes)
    p = Path(node.path)
    try:
        capture = load_capture(node.reader(), max_bytes=max_bytes, max_seconds=None if limits is None else limits.max_seconds,
                               checkpoint=None if meter is None else meter.check_time)
        return _capture_source(capture, node.path, keep_replays)
    except CaptureFormatError as exc:
        raise SourceError(f"cannot read this capture: {exc}") from None
    except OSError as exc:
        raise SourceError(f"cannot read {p.name}: {exc.strerror or type(exc).__name__}") from None


def views_from_capture_file(path: str, *, max_bytes: int = DEFAULT_MAX_CAPTURE_BYTES,
                            max_seconds: Optional[float] = None) -> LoadedSource:
    """Views of every query of a capture file. Raises :class:`CaptureFormatError` for a file
    that is not a well-formed capture (bounded by ``max_bytes`` decoded / ``max_seconds``)."""
    return _capture_source(load_capture(path, max_bytes=max_bytes, max_seconds=max_seconds), path)


def _capture_source(capture: Capture, path: str, keep_replays: bool = False) -> LoadedSource:
    views, report = views_from_capture(capture)
    return LoadedSource("capture", capture_label(capture, report), path, capture.spark_version, views,
                        warnings=list(capture.warnings), notes=list(report.notes),
                        replays=_replays(views, report) if keep_replays else {})


def _replays(views: list[QueryView], report: SimulationReport) -> dict[str, QueryResult]:
    """Each exact view's replay by query id; none for an id that several views share (a capture
    of several workloads repeats indexes): theirs are made again, as before."""
    ids = Counter(v.query_id for v in views)
    return {v.query_id: qr for v, qr in zip(views, report.queries) if ids[v.query_id] == 1}


def load_exact(path: str) -> Capture:
    """What ``simulate`` replays: a capture file, or the listener's executions of an event log
    (docs/listener.md). A plain event log holds sizes after AQE only: :class:`SourceError`."""
    p = Path(path)
    if not p.exists():
        raise SourceError(f"no such file or directory: {path}")
    try:
        if looks_like_capture(p):
            return load_capture(str(p))
        log = load(str(p))
    except CaptureFormatError as exc:
        raise SourceError(f"cannot read this capture: {exc}") from None
    except EventLogError as exc:
        raise SourceError(str(exc)) from None
    except OSError as exc:
        raise SourceError(f"cannot read {p.name}: {exc.strerror or type(exc).__name__}") from None
    cap = listener_capture(log)
    if cap is None:
        raise SourceError("this event log has no AQE Lens listener events: a plain log holds partition sizes after"
                          " AQE only, so it cannot be replayed exactly (run the job with the listener,"
                          " docs/listener.md; `inspect` summarises a plain log)")
    return cap
