"""The MCP server through a real MCP client session: the SDK's own client starts
``python -m aqe_core mcp`` over stdio (one server process for this module), lists the tools,
calls each on a sample event log and a capture, checks every answer against its documented
schema and against the CLI's own JSON for the same question, and checks the refusals."""
from __future__ import annotations

import asyncio
import contextlib
import io
import json
import sys
import threading
from pathlib import Path

import jsonschema
import pandas as pd
import pytest

from aqe_core.mcp.schemas import answer_schema
from aqe_core.server_settings import SAMPLES_DIR

ROOT = Path(__file__).resolve().parents[2]
CAPTURE = str(SAMPLES_DIR / "captures" / "3.0.1-skew_join_inner.json.gz")
LOG = str(SAMPLES_DIR / "eventlogs" / "local-1795309160158.zstd")  # Spark 3.5.9, a plain log
LISTENER = str(SAMPLES_DIR / "eventlogs" / "local-1795485556982.zstd")  # Spark 4.3.0 with the AQE Lens listener
TOOLS = {"open_source", "list_queries", "list_query_groups", "explain_query", "histogram", "what_if", "recommend",
         "compare_releases", "lint_settings", "diff_runs", "scan_summary", "hot_keys"}


class Session:
    """A client session held open in a thread of its own, for synchronous tests."""

    def __init__(self, env: dict[str, str], args: tuple[str, ...] | list[str] = ()) -> None:
        from mcp.client import Client
        from mcp.client.stdio import StdioServerParameters

        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self.client = None
        self.error: BaseException | None = None
        params = StdioServerParameters(command=sys.executable, args=["-m", "aqe_core", "mcp", *args], env=env,
                                        cwd=str(ROOT))

        async def hold() -> None:
            self._stop = asyncio.Event()
            try:
                async with Client(params, read_timeout_seconds=120) as client:
                    self.client = client
                    self._ready.set()
                    await self._stop.wait()
            except BaseException as exc:  # noqa: BLE001 - reported to the test that waits
                self.error = exc
                self._ready.set()

        self.thread = threading.Thread(target=lambda: self.loop.run_until_complete(hold()), daemon=True)
        self.thread.start()
        self._ready.wait(120)
        if self.client is None:
            raise RuntimeError(f"the MCP server did not start: {self.error!r}")

    def run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(180)

    def call(self, name: str, args: dict):
        return self.run(self.client.call_tool(name, args))

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self._stop.set)
        self.thread.join(30)


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("lens_home")


@pytest.fixture(scope="module")
def session(home):
    env = {"AQE_LENS_HOME": str(home), "AQE_LENS_CONFIG": str(home / "none.toml"), "PYTHONPATH": str(ROOT)}
    s = Session(env)
    yield s
    s.close()


def answer(session, name: str, args: dict) -> dict:
    """The tool's structured answer, checked against its schema and its text blocks."""
    got = session.call(name, args)
    assert not got.is_error, got.content[0].text
    doc = got.structured_content
    jsonschema.validate(doc, answer_schema(name))
    assert got.content[0].text == doc["summary"] and json.loads(got.content[1].text) == doc
    return doc


def refused(session, name: str, args: dict) -> str:
    got = session.call(name, args)
    assert got.is_error, f"{name} {args} was not refused"
    text = got.content[0].text
    assert "Traceback" not in text and "File \"" not in text and "\n" not in text
    return text


def cli_json(*argv: str):
    """The CLI's ``--json`` answer, run in this process."""
    from aqe_core.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main([*argv, "--json"])
    return json.loads(out.getvalue())


def test_lists_every_tool_with_its_schemas_and_the_settings_resources(session):
    tools = session.run(session.client.list_tools()).tools
    assert {t.name for t in tools} == TOOLS
    for t in tools:
        assert t.description and t.input_schema["type"] == "object"
        assert t.output_schema == answer_schema(t.name)
    assert not any("sql" in t.name or t.name.startswith("run") or "verify" in t.name for t in tools)  # no Spark run
    assert "verify_fix" in refused(session, "verify_fix", {"source": CAPTURE})  # only with --allow-runs
    uris = {str(r.uri) for r in session.run(session.client.list_resources()).resources}
    assert {"aqe-lens://settings", "aqe-lens://settings/3.0.1", "aqe-lens://settings/4.3.0"} <= uris
    doc = json.loads(session.run(session.client.read_resource("aqe-lens://settings/3.0.1")).contents[0].text)
    keys = {k["key"]: k for k in doc["settings"]}
    assert keys["spark.sql.adaptive.enabled"]["default"] == "false"  # 3.0's default, from the registry
    assert "spark.sql.adaptive.forceOptimizeSkewedJoin" not in keys  # a 3.3.0 setting
    assert keys["spark.sql.adaptive.enabled"]["sqlconf"] == {"default": "false", "public": True, "since": "1.6.0"}


@pytest.mark.parametrize("source", [CAPTURE, LOG, LISTENER])
def test_open_source_then_answers_from_memory(session, source):
    first = answer(session, "open_source", {"path": source})
    again = answer(session, "open_source", {"path": source})
    assert again["answer"]["cached"] is True
    assert again["answer"]["executions"] == first["answer"]["executions"] > 0
    assert first["answer"]["kind"] == ("capture" if source == CAPTURE else "eventlog")
    exact = first["answer"]["exact_executions"]
    assert (exact == first["answer"]["executions"]) == (source == CAPTURE)
    assert (exact > 0) == (source != LOG)  # the listener's executions are exact, a plain log's none
    assert first["evidence"]["level"] == ("exact" if source == CAPTURE else "spark-metric")


@pytest.mark.parametrize("source,execution", [(CAPTURE, "0"), (LOG, "2"), (LISTENER, "6")])
def test_explain_recommend_releases_and_lint_are_the_cli_json(session, source, execution):
    ex = answer(session, "explain_query", {"source": source, "execution": execution})
    assert ex["answer"] == cli_json("explain", source, "--execution", execution)
    assert ex["query"] == execution
    rec = answer(session, "recommend", {"source": source, "execution": execution})
    assert rec["answer"] == cli_json("recommend", source, "--execution", execution)
    rel = answer(session, "compare_releases", {"source": source, "execution": int(execution)})
    assert rel["answer"] == cli_json("releases", source, "--execution", execution)
    lint = answer(session, "lint_settings", {"source": source, "execution": execution, "target": "3.3.x"})
    assert lint["answer"] == cli_json("lint", source, "--execution", execution, "--target", "3.3.x")


def test_lint_of_given_settings_is_the_cli_json(session):
    key = "spark.sql.adaptive.skewJoin.skewedPartitionFactor"
    doc = answer(session, "lint_settings", {"settings": {key: "2.5"}, "target": "3.3.4", "source_version": "3.5.9"})
    assert doc["answer"] == cli_json("lint", "--conf", f"{key}=2.5", "--source-version", "3.5.9", "--target", "3.3.4")
    assert doc["answer"][0]["findings"][0]["severity"] == "error"


def test_diff_runs_is_the_cli_json(session):
    a, b = str(SAMPLES_DIR / "captures" / "4.2.1-skew_join_inner.json.gz"), str(SAMPLES_DIR / "captures" /
                                                                              "4.3.0-skew_join_inner.json.gz")
    doc = answer(session, "diff_runs", {"a": a, "b": b, "threshold": 5})
    assert doc["answer"] == cli_json("diff", a, b, "--threshold", "5")
    assert doc["summary"].startswith("3 queries matched") and doc["evidence"]["level"] == "exact"
    assert "outside" in refused(session, "diff_runs", {"a": a, "b": "/etc/passwd"})


def test_why_reducer_5_was_not_split_the_worked_example(session):
    """docs/mcp.md's transcript: the rule's own numbers, then the fix replayed exactly."""
    ex = answer(session, "explain_query", {"source": CAPTURE, "execution": "0"})
    read = ex["answer"]["executions"][0]["reads"][0]
    assert ex["evidence"]["level"] == "exact" and read["evidence"] == "exact"
    assert any("not above 5 x median 77.9 KiB" in s for s in read["sentences"])
    skew = next(t for t in read["trace"] if t["rule"] == "OptimizeSkewedJoin")
    assert skew["verdict"].startswith("not split")
    rec = answer(session, "recommend", {"source": CAPTURE, "execution": "0"})
    fix = rec["answer"][0]["fixes"][0]
    assert fix["finding"] == "skew left unsplit" and fix["evidence"] == "exact"
    assert fix["settings"] == {"spark.sql.adaptive.skewJoin.skewedPartitionFactor": "4"}
    assert "skew left unsplit" in rec["summary"]


def test_list_queries_is_the_triage_ranking_filtered_and_paged(session):
    from aqe_core.opening import load_source
    from aqe_core.views.triage import triage

    ranked = [r.query_id for r in triage(load_source(LOG).views)]
    doc = answer(session, "list_queries", {"source": LOG, "limit": 4})
    assert [r["query"] for r in doc["answer"]] == ranked[:4]
    assert doc["page"] == {"offset": 0, "limit": 4, "total": len(ranked), "next_offset": 4}
    rest = answer(session, "list_queries", {"source": LOG, "offset": 4, "limit": 200})
    assert [r["query"] for r in rest["answer"]] == ranked[4:] and rest["page"]["next_offset"] is None
    coalesced = answer(session, "list_queries", {"source": LOG, "findings": ["coalesced"]})
    assert coalesced["answer"] and all("coalesced" in r["finding_codes"] for r in coalesced["answer"])


@pytest.mark.parametrize("source,execution", [(CAPTURE, "0"), (LOG, "2")])
def test_histogram_is_one_read_of_explain(session, source, execution):
    reads = cli_json("explain", source, "--execution", execution)["executions"][0]["reads"]
    node = reads[0]["node_id"]
    doc = answer(session, "histogram", {"source": source, "execution": execution, "node_id": node, "limit": 5})
    assert doc["answer"]["partitions"] == reads[0]["partitions"][:5]
    assert doc["answer"]["lines"] == reads[0]["lines"]
    assert doc["page"]["total"] == len(reads[0]["partitions"])
    assert doc["evidence"]["level"] == reads[0]["evidence"]


@pytest.mark.parametrize("source,execution", [(CAPTURE, "0"), (LOG, "2")])
def test_what_if_is_the_apps_what_if(session, source, execution):
    from aqe_core.api import load_source, whatif
    from aqe_core.views.answers import levelled

    key = "spark.sql.adaptive.advisoryPartitionSizeInBytes"
    doc = answer(session, "what_if", {"source": source, "execution": execution, "settings": {key: "1m"}})
    view = load_source(source).view(execution)
    ours = whatif(view, {key: "1m"})
    # the app's table rows, their evidence as a level with the label beside it (one vocabulary per field)
    assert [o["summary"] for o in doc["answer"]["outcomes"]] == [json.loads(json.dumps(levelled(o.summary_row())))
                                                                 for o in ours.outcomes]
    assert doc["evidence"]["level"] == ours.outcomes[1].evidence.value


def test_scan_summary_reads_a_scan_result(session, home):
    from aqe_core.fleet.rows import scan_file

    execs, finds = scan_file(LOG)
    out = home / "scans" / "one"
    for name, rows in (("executions", execs), ("findings", finds)):
        (out / name).mkdir(parents=True)
        pd.DataFrame(rows).to_parquet(out / name / "part-0.parquet")
    doc = answer(session, "scan_summary", {"path": str(out), "limit": 3})
    assert doc["answer"]["executions"] == len(execs) and doc["answer"]["logs"] == 1
    assert len(doc["answer"]["rows"]) == 3 and doc["page"]["total"] == len(execs)
    assert refused(session, "scan_summary", {"path": str(SAMPLES_DIR)}).endswith(
        "not a fleet scan result (it has no executions/ and findings/ tables)")


def test_refusals_are_one_line_tool_errors(session, home, tmp_path):
    outside = tmp_path / "log.json"
    outside.write_text("{}")
    for path in ("/etc/passwd", str(outside), str(SAMPLES_DIR / ".." / "README.md"), ""):
        assert "outside the folders this server may open" in refused(session, "open_source", {"path": path}) \
            or "give the path" in refused(session, "open_source", {"path": path})
    (home / "escape").symlink_to(outside)  # a symlink in a root that leads out of it
    assert "outside" in refused(session, "explain_query", {"source": str(home / "escape")})
    assert "less than or equal to 200" in refused(session, "list_queries", {"source": LOG, "limit": 100_000})
    assert "less than or equal to 5000" in refused(session, "histogram", {"source": CAPTURE, "limit": 10**9})
    assert "valid string" in refused(session, "explain_query", {"source": 5})
    assert "source" in refused(session, "explain_query", {})
    assert "give execution" in refused(session, "explain_query", {"source": LOG})
    assert "no SQL execution 999" in refused(session, "recommend", {"source": LOG, "execution": "999"})
    assert "findings must be a list of" in refused(session, "list_queries", {"source": LOG, "findings": ["nope"]})
    assert "give node_id" in refused(session, "histogram", {"source": CAPTURE, "execution": "0"})
    assert "cannot be set here" in refused(session, "what_if", {"source": CAPTURE, "execution": "0",
                                                                "settings": {"spark.jars": "/tmp/x.jar"}})
    assert "Java class" in refused(session, "what_if", {"source": CAPTURE, "execution": "0", "settings": {
        "spark.sql.adaptive.customCostEvaluatorClass": "x.Y"}})
    assert "at most" in refused(session, "what_if", {"source": CAPTURE, "execution": "0", "settings": {
        f"spark.sql.adaptive.k{i}": "1" for i in range(40)}})
    assert "target" in refused(session, "lint_settings", {"settings": {"a": "b"}})
    assert "9.9" in refused(session, "lint_settings", {"source": CAPTURE, "target": "9.9.x"})


def test_an_answer_past_the_size_limit_is_refused_with_how_to_page(monkeypatch):
    from aqe_core.mcp import tools
    from aqe_core.mcp.advice_tools import AdviceTools

    monkeypatch.setattr(tools, "MAX_ANSWER_BYTES", 4000)
    t = AdviceTools()
    with pytest.raises(tools.ToolInputError, match="smaller page"):
        t.list_queries(LOG, limit=200)  # 11 rows: about 5 KB
    assert len(t.list_queries(LOG, limit=5).answer) == 5
    monkeypatch.setattr(tools, "MAX_ANSWER_BYTES", 8500)
    small = t.explain_query(CAPTURE, "0", limit=1)  # too big with its partitions (9 KB): they are left out
    assert small.answer["executions"][0]["reads"][0]["partitions"] == [] and small.notes


def test_the_documented_schemas_are_the_published_ones():
    """docs/mcp.md's "Answer schemas" section is the code's, tool by tool."""
    from aqe_core.mcp.schemas import TOOL_ANSWERS, envelope_schema

    doc = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8").split("## Answer schemas", 1)[1]
    blocks = [json.loads(b.split("```", 1)[0]) for b in doc.split("```json\n")[1:]]
    assert blocks == [envelope_schema(), *TOOL_ANSWERS.values()]
    assert all(f"`{tool}`'s `answer`" in doc for tool in TOOL_ANSWERS)


def test_hot_keys_gives_sql_for_the_users_cluster_and_runs_nothing(session):
    """A listener log's skewed reducer (reducer 5, split by Spark): the SQL with the exchange's key,
    partition count and reducer filled in, labelled as code for the user; no key counted here."""
    doc = answer(session, "hot_keys", {"source": LISTENER, "execution": "2"})
    (entry,) = [e for e in doc["answer"] if e["reducer"] == 5]
    assert entry["keys"] is None and entry["splits"] == 2
    code = entry["code_for_your_cluster"]
    assert "did not run it" in code["label"]
    assert "pmod(hash(key), 40) AS reducer" in code["sql"] and "WHERE reducer IN (5)" in code["sql"]
