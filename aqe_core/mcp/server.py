"""AQE Lens as a Model Context Protocol server (issue 29): an assistant asks, AQE's own rules
answer, every number labelled exact, Spark's metric or estimate.

``python -m aqe_core mcp`` serves on stdio (an assistant starts it); ``--http`` serves
streamable HTTP on 127.0.0.1 only. Built on the official ``mcp`` SDK's :class:`MCPServer`; the
tools themselves are :class:`aqe_core.mcp.advice_tools.AdviceTools` (no SDK there), so a tool
error is always one line (an MCP tool error, ``isError``), never a traceback.

Safety, as in the app: paths only under the server's roots (``server.toml``'s ``roots``,
``AQE_LENS_ROOTS``, the samples and ``$AQE_LENS_HOME``), the app's decoding limits and memory
budget, bounded and paged answers. No tool runs SQL or Spark unless the operator passes
``--allow-runs``: then ``verify_fix`` reruns a captured query with a fix and ``count_hot_keys`` counts
a capture's hot keys, through the SQL and conf guards (even with ``trusted`` on), with the time limit, one run at a time.
"""
import json
import logging
from typing import Annotated, Any, Callable, Optional, Union

from pydantic import Field

from aqe_core.mcp.advice_tools import AdviceTools
from aqe_core.mcp.schemas import answer_schema
from aqe_core.mcp.tools import MAX_PARTITIONS, MAX_QUERIES, MAX_READS, MAX_SETTINGS, Answer, ToolInputError

__all__ = ["INSTRUCTIONS", "build_server", "serve"]

INSTRUCTIONS = """AQE Lens replays Apache Spark's Adaptive Query Execution rules on what Spark recorded.
Start with open_source(path) on an event log, a listener log or a capture (paths under the server's
roots), then list_queries to rank its SQL executions (list_query_groups: grouped by query), explain_query for why AQE did what it did
(each rule's checks with the numbers it read), histogram for one read's partitions and lines,
recommend for the smallest setting change with its predicted effect, hot_keys for each skewed reducer's SQL
to run on the user's cluster and its fixes, what_if for your own settings,
compare_releases across Spark 3.0.1-4.3.0 and lint_settings for a release. Quote the evidence label of
every number: exact (what AQE decided with), Spark's metric (a plain log) or estimate (derived, with
what it assumes). Only verify_fix and count_hot_keys, when the operator allowed runs, run Spark (guarded).
A log past the server's max_executions opens listed by query (open_source says so): list_query_groups,
then explain_query (or any tool) with an execution id it lists; that execution is read from the log again."""

# (no `from __future__ import annotations` here: the SDK reads these annotations at run time)
Execution = Annotated[Optional[Union[str, int]], Field(description="a SQL execution id (list_queries gives them; on a"
                                                       " log listed by query, list_query_groups); may be left out"
                                                       " when the source has one")]
Source = Annotated[str, Field(description="path of an event log, listener log or capture under the server's roots",
                              max_length=4096)]
Offset = Annotated[int, Field(ge=0, description="first item of the page")]


def _result(answer: Answer):
    from mcp.types import CallToolResult, TextContent

    doc = answer.to_dict()
    return CallToolResult(content=[TextContent(type="text", text=answer.summary),
                                   TextContent(type="text", text=json.dumps(doc))], structured_content=doc)


def _call(fn: Callable[..., Answer], **kwargs: Any):
    """A tool's answer, or the SDK's tool error with one line (never a traceback)."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        return _result(fn(**kwargs))
    except ToolInputError as exc:
        raise ToolError(str(exc)) from None
    except MemoryError:
        raise ToolError("out of memory while answering: ask for less (a smaller limit, one execution)") from None
    except Exception as exc:  # an assistant gets one line, the operator's log the traceback
        logging.getLogger(__name__).exception("tool %s failed", getattr(fn, "__name__", "?"))
        raise ToolError(f"internal error ({type(exc).__name__}); the server's log has the details") from None


def _tool_functions(t: AdviceTools) -> list[Callable[..., Any]]:
    """The tools, their arguments typed and described for the assistant (the input schemas)."""
    def open_source(path: Source):
        """Open an event log (any codec, rolling directory), a listener log or a capture; later calls on it answer
        from memory. Returns its SQL executions with how each is known."""
        return _call(t.open_source, path=path)

    def list_queries(source: Source, text: Annotated[str, Field(max_length=500)] = "",
                     findings: Annotated[Optional[list[str]], Field(max_length=20, description=(
                         "only rows with one of these: skew_split, skew_not_split, coalesced, straggler, broadcast,"
                         " shuffled_hash, demoted, join_kept, no_aqe"))] = None,
                     offset: Offset = 0, limit: Annotated[int, Field(ge=1, le=MAX_QUERIES)] = 50):
        """Every SQL execution ranked by what AQE did and what it cost (the Overview's triage), filtered by text and
        findings, paged."""
        return _call(t.list_queries, source=source, text=text, findings=findings, offset=offset, limit=limit)

    def explain_query(source: Source, execution: Execution = None, offset: Offset = 0,
                      limit: Annotated[int, Field(ge=1, le=MAX_READS)] = 20):
        """Why AQE did what it did in one query: every adaptive read (partitions, skewed reducers, the lines and
        sentences), each shuffle-read rule's decision trace and every join's (explain --json)."""
        return _call(t.explain_query, source=source, execution=execution, offset=offset, limit=limit)

    def histogram(source: Source, execution: Execution = None,
                  node_id: Annotated[Optional[int], Field(description="the read's plan node id (explain_query)")] = None,
                  offset: Offset = 0, limit: Annotated[int, Field(ge=1, le=MAX_PARTITIONS)] = 1000):
        """One read's partition sizes (after AQE, and before it where the source holds them) with the median, skew
        threshold and coalescing / split targets our rules compute, paged."""
        return _call(t.histogram, source=source, execution=execution, node_id=node_id, offset=offset, limit=limit)

    def what_if(source: Source, settings: Annotated[dict[str, Union[str, int, float, bool]], Field(
                    min_length=1, max_length=MAX_SETTINGS, description="AQE settings to change, name -> value")],
                execution: Execution = None):
        """The query's AQE decisions and lines under other settings (our rules; exact on captures and listener logs,
        labelled estimates on plain logs), beside what Spark did."""
        return _call(t.what_if, source=source, settings=settings, execution=execution)

    def recommend(source: Source, execution: Execution = None):
        """Each finding's smallest setting change (skew left unsplit, over- or under-coalescing, a missed or demoted
        broadcast), replayed on every read of the query and on the application's other queries (recommend --json)."""
        return _call(t.recommend, source=source, execution=execution)

    def compare_releases(source: Source, execution: Execution = None):
        """The query through every Spark release's rules (3.0.1-4.3.0) with what differs and why (releases --json)."""
        return _call(t.compare_releases, source=source, execution=execution)

    def lint_settings(source: Annotated[Optional[str], Field(max_length=4096)] = None, execution: Execution = None,
                      settings: Annotated[Optional[dict[str, Union[str, int, float, bool]]], Field(
                          max_length=MAX_SETTINGS, description="settings to check instead of a source's")] = None,
                      target: Annotated[Optional[str], Field(max_length=20, description="release to check against:"
                                                             " 4.2.1, or a line: 4.2.x")] = None,
                      source_version: Annotated[Optional[str], Field(max_length=20)] = None):
        """Settings checked against a Spark release: unknown keys, keys the release lacks, legacy names, values it
        rejects, defaults that differ (lint --json)."""
        return _call(t.lint_settings, source=source, execution=execution, settings=settings, target=target,
                     source_version=source_version)

    def scan_summary(path: Source, findings: Annotated[Optional[list[str]], Field(max_length=20)] = None,
                     text: Annotated[str, Field(max_length=500)] = "",
                     sort: Annotated[str, Field(description="wasted task time, triage score, duration or file")]
                     = "wasted task time",
                     offset: Offset = 0, limit: Annotated[int, Field(ge=1, le=MAX_QUERIES)] = 50):
        """A fleet scan's results (python -m aqe_core scan ... -o DIR): logs, executions, findings, applications worse
        than their run before, and the executions ranked, paged."""
        return _call(t.scan_summary, path=path, findings=findings, text=text, sort=sort, offset=offset, limit=limit)

    def diff_runs(a: Annotated[str, Field(max_length=4096, description="the baseline run: a log or capture")],
                  b: Annotated[str, Field(max_length=4096, description="the run to compare with it")],
                  threshold: Annotated[float, Field(ge=0, le=10_000, description="percent slower that counts as a"
                                                                               " regression")] = 10.0,
                  min_ms: Annotated[int, Field(ge=0, le=10**9, description="and milliseconds slower (both must"
                                                                          " hold)")] = 1000):
        """Two runs of one job compared (diff --json): queries aligned by plan shape, AQE's decisions side by side,
        whether the data, the settings or the release made the difference, the queries that got slower; a query run
        more than once (micro-batches, a Thrift server's statements) once per run side by side (query_groups)."""
        return _call(t.diff_runs, a=a, b=b, threshold=threshold, min_ms=min_ms)

    return [open_source, list_queries, *_group_tool_functions(t), explain_query, histogram, what_if, recommend,
            *_hot_key_functions(t), compare_releases, lint_settings,
            diff_runs, scan_summary, *_run_tool_functions(t)]


def _group_tool_functions(t: AdviceTools) -> list[Callable[..., Any]]:
    """The tools over a source's executions grouped by query."""
    def list_query_groups(source: Source, offset: Offset = 0, limit: Annotated[int, Field(ge=1, le=MAX_QUERIES)] = 20):
        """The SQL executions grouped by query (the same plan, join strategies aside: a streaming query's batches, a
        statement run again and again): per query its executions, time span, each AQE decision's outcomes and the
        executions where one changed, in a sentence with the log's numbers (explain --json's query_groups), paged."""
        return _call(t.list_query_groups, source=source, offset=offset, limit=limit)

    return [list_query_groups]


def _hot_key_functions(t: AdviceTools) -> list[Callable[..., Any]]:
    """``hot_keys``: no Spark, the SQL for the user's cluster (``count_hot_keys`` counts, with runs)."""

    def hot_keys(source: Source, execution: Execution = None):
        """The skewed reducers of a query (split or not), the SQL to run on the user's own cluster for their top keys
        (keys, partition count and reducers filled in: code for them, not run here) and the fixes (hot-keys --no-spark)."""
        return _call(t.hot_keys, source=source, execution=execution)

    return [hot_keys]


def _run_tool_functions(t: AdviceTools) -> list[Callable[..., Any]]:
    """``verify_fix`` when the operator allowed runs (``--allow-runs``: the tools have it), else none."""
    if not hasattr(t, "verify_fix"):
        return []

    def verify_fix(source: Source, execution: Execution = None,
                   fix: Annotated[int, Field(ge=0, le=50, description="which fix of recommend (0: the first)")] = 0):
        """Run the query of a capture or listener log again on Spark with one of recommend's exact fixes and score
        each read against the prediction (recommend --verify). Guarded SQL, one run at a time, a time limit."""
        return _call(t.verify_fix, source=source, execution=execution, fix=fix)

    def count_hot_keys(source: Source, execution: Execution = None,
                       top: Annotated[int, Field(ge=1, le=20, description="keys per reducer")] = 5):
        """The top keys of every skewed reducer of a query, counted on Spark with the exchange's own partitioning
        (a capture's query planned again; an event log's SQL, written from its plan, run on the tables of the same
        names the server's Spark has), checked against what Spark recorded, with the fix per key (hot-keys --json).
        Guarded SQL, one run at a time, a time limit."""
        return _call(getattr(t, "count_hot_keys"), source=source, execution=execution, top=top)

    return [verify_fix, count_hot_keys]


def _settings_resources() -> list[Any]:
    """The documentation of every AQE setting of each release, from the key registry, with the
    release's recorded SQLConf entry beside each (``sqlconf``; null where not recorded)."""
    from mcp.server.mcpserver.resources import TextResource

    from aqe_core import config
    from aqe_core.advise.releases import RELEASES

    out = [TextResource(uri="aqe-lens://settings", name="settings", mime_type="application/json",
                        description="The releases whose AQE settings are documented here",
                        text=json.dumps({"releases": list(RELEASES),
                                         "uris": [f"aqe-lens://settings/{r}" for r in RELEASES]}))]
    for rel in RELEASES:
        recorded = _recorded_sqlconf(rel)
        keys = [{"key": k.key, "type": k.type, "default": k.default, "default_is_key": k.fallback, "doc": k.doc,
                 "since": k.since, "until": k.until, "internal": k.internal, "sqlconf": recorded.get(k.key)}
                for k in sorted(config.keys_for(rel).values(), key=lambda k: k.key)]
        out.append(TextResource(uri=f"aqe-lens://settings/{rel}", name=f"settings-{rel}", mime_type="application/json",
                                description=f"Every AQE setting of Spark {rel}: type, default, what it does",
                                text=json.dumps({"release": rel, "settings": keys}, indent=1)))
    return out


def _recorded_sqlconf(release: str) -> dict[str, Any]:
    """The release's own SQLConf entries as recorded from Spark (``tools/record_sqlconf.py``: its
    rendered default, whether it is public, since when), where the checkout has them; {} else."""
    from aqe_core.server_settings import REPO_ROOT

    try:
        data = json.loads((REPO_ROOT / "tests" / "fixtures" / "sqlconf" / f"{release}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    entries = data.get("entries") if isinstance(data, dict) else None
    return entries if isinstance(entries, dict) else {}


def _arguments_refusal(tool: str, exc: Any) -> str:
    """A pydantic argument error as one line: each field and what it should be."""
    parts = []
    for err in exc.errors()[:6]:
        where = ".".join(str(x) for x in err.get("loc", ()) if x != tool + "Arguments") or "arguments"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return f"bad arguments for {tool}: " + "; ".join(parts)


def _server_class():
    """:class:`MCPServer` whose argument errors are one line (the SDK's are pydantic's
    multi-line report with links)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from pydantic import ValidationError

    class LensServer(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None):
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                if isinstance(exc.__cause__, ValidationError):
                    raise ToolError(_arguments_refusal(name, exc.__cause__)) from exc.__cause__
                raise

    return LensServer


def build_server(tools: Optional[AdviceTools] = None, *, allow_runs: bool = False):
    """The :class:`MCPServer` with every tool (its answer schema published) and resource;
    ``allow_runs`` adds ``verify_fix``, the one tool that runs Spark (guarded)."""
    from mcp.server.mcpserver.tools import Tool

    from aqe_core import __version__

    if tools is None:
        from aqe_core.mcp.run_tools import RunTools

        tools = RunTools() if allow_runs else AdviceTools()
    t = tools
    published = []
    for fn in _tool_functions(t):
        tool = Tool.from_function(fn, structured_output=False)
        tool.fn_metadata.output_schema = answer_schema(fn.__name__)
        published.append(tool)
    return _server_class()("aqe-lens", version=__version__, instructions=INSTRUCTIONS, tools=published,
                     resources=_settings_resources(), log_level="WARNING")


def serve(http: bool = False, port: int = 8765, allow_runs: bool = False) -> None:
    """Serve until stopped: stdio, or streamable HTTP on 127.0.0.1 (never another interface)."""
    server = build_server(allow_runs=allow_runs)
    if http:
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        server.run("stdio")
