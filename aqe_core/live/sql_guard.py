"""Decide from Spark's own parse and analysis whether SQL from a stranger may run.

Spark has no SQL sandbox: ``TRANSFORM ... USING 'sh -c ...'`` runs a program, ``reflect(...)``
calls any Java method, `` text.`/etc/passwd` `` reads a file, ``ADD JAR`` loads code. A text
filter cannot keep up with the spellings (backticks, ``builtin.`reflect```, ``IDENTIFIER('...')``,
nested comments, unicode), so this guard asks Spark what the text *is*:

1. **Parse** with the session's own parser (``sessionState.sqlParser.parsePlan``): one statement
   or nothing. The parsed plan is walked before anything is analysed, because analysis already
   acts: it resolves path relations (reads files), runs ``EXECUTE IMMEDIATE``'s statement, loads
   the jars of persistent functions and loads the class named in ``reflect``.
2. **Analyse** with the session's analyzer (``Analyzer.executeAndCheck``, never ``spark.sql``,
   which runs commands eagerly) and walk the resolved plan again.

Both walks are allow-lists that fail closed: every plan node must be a relational operator the
guard knows (Project, Filter, Aggregate, Join, Sort, limits, set operations, Window, Generate,
CTEs, hints, Sample, Expand, ...) over catalog tables, views (temporary ones too, including views
of DataFrames), ``range``, inline tables and subqueries, walked through views, CTE definitions
and subquery expressions. Every expression must be a class of Catalyst's built-in expression
packages (``expressions``, ``.aggregate``, ``.json``, ``.csv``, ``.variant``, ``.st``, ``.url``;
not ``.objects``, whose StaticInvoke/Invoke/NewInstance call arbitrary methods, and not
``.xml``, whose parsers resolve external entities), minus a deny-set by name: reflection
(CallMethodViaReflection, TryReflect), user code (ScalaUDF, Python UDF/UDAF/UDTF, any
user-defined generator) and codecs that load classes or descriptor files (Avro, Protobuf).
Functions in the parsed plan must be Spark built-ins (optionally ``builtin.``/``system.builtin.``
qualified), so a persistent function's jar is never loaded. Checking by class works because
RuntimeReplaceable functions are still unreplaced in the analysed plan: ``try_reflect`` is seen
as TryReflect, not as what it expands to. Refused: commands of any kind (EXPLAIN, SET, RESET,
USE, CACHE, ADD JAR, CREATE FUNCTION, INSERT ... DIRECTORY, CTAS, EXECUTE IMMEDIATE, scripts),
script transformation, relations without a catalog table (files by path), IDENTIFIER(...) used
as a name (the guard must see every name), and anything it does not recognise. Analysis and the
guarded run itself have ``spark.sql.runSQLOnFiles`` off, so a path cannot name a file either way.

Spark's parser substitutes ``${env:NAME}``, ``${system:prop}`` and ``${spark:key}`` before it
parses (``SparkSqlParser`` through ``VariableSubstitution``), so a string literal could carry the
server's secrets into the plan. Guarded sessions run with ``spark.sql.variable.substitute`` off
and :func:`check_text` refuses ``${`` outright, with or without Spark.

``raise_error``/``assert_true`` are allowed: instead, a guarded run that fails during execution
reports Spark's error class and a generic sentence, never Spark's message text (which can carry
data: ``raise_error(secret)``, a failed cast's value); see :mod:`aqe_core.live.runner`.

Setup statements (a capture's or workload's views) may only be ``CREATE [OR REPLACE] TEMPORARY
VIEW name AS <query>`` with a query this guard allows (:func:`check_setup`).

The guard is ON by default everywhere SQL or settings from users reach Spark (Run page, CLI
``run``, Re-run for real, capture setup statements, workload overrides; settings through
:mod:`aqe_core.live.conf_guard`). A single trusted user turns it off with ``trusted = true`` in the
server settings (``AQE_LENS_TRUSTED=1``) or ``python -m aqe_core run --trusted``.
``python -m aqe_core check-sql`` vets statements in bulk with this same guard.
"""
from __future__ import annotations

import json
import re
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator, Optional

MAX_SQL_CHARS = 100_000
MAX_PLAN_NODES = 5_000

_L = "org.apache.spark.sql.catalyst.plans.logical."
_AN = "org.apache.spark.sql.catalyst.analysis."
_EX = "org.apache.spark.sql.catalyst.expressions"

#: relational operators allowed in both the parsed and the analysed plan
_QUERY_NODES = frozenset(_L + n for n in (
    "Project", "Filter", "Aggregate", "Join", "LateralJoin", "Sort", "GlobalLimit", "LocalLimit", "Limit", "LimitAll",
    "Offset", "Tail", "Union", "Intersect", "Except", "Distinct", "Deduplicate", "Window", "Generate",
    "SubqueryAlias", "Expand", "Sample", "Repartition", "RepartitionByExpression", "RebalancePartitions",
    "ResolvedHint", "WithCTE", "CTERelationDef", "CTERelationRef", "UnionLoop", "UnionLoopRef", "Range",
    "LocalRelation", "OneRowRelation", "EmptyRelation", "Pivot", "Unpivot", "WithWindowDefinition", "View",
))
#: what only the parser produces (resolved away by analysis)
_PARSED_NODES = _QUERY_NODES | {
    _L + "UnresolvedWith", _L + "With", _L + "UnresolvedHint",
    _AN + "UnresolvedRelation", _AN + "UnresolvedTableValuedFunction", _AN + "UnresolvedInlineTable",
    _AN + "UnresolvedSubqueryColumnAliases", _AN + "UnresolvedHaving", _AN + "UnresolvedTVFAliases",
}
#: allowed nodes holding plans in fields that are neither children nor subquery expressions
_INNER_CHILDREN_NODES = frozenset({_L + "UnresolvedWith", _L + "With"})
_LOGICAL_RELATION = "org.apache.spark.sql.execution.datasources.LogicalRelation"
_V2_RELATION = "org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation"
#: leaves only analysis produces: relations behind catalog tables and DataFrame views
_ANALYZED_NODES = _QUERY_NODES | {
    "org.apache.spark.sql.execution.LogicalRDD", "org.apache.spark.sql.catalyst.catalog.HiveTableRelation",
    _LOGICAL_RELATION, _V2_RELATION, _AN + "ResolvedInlineTable",
}

_EXPR_PACKAGES = frozenset({_EX} | {f"{_EX}.{p}" for p in ("aggregate", "json", "csv", "variant", "st", "url")})
#: expression classes of the allowed packages that call into the JVM or load code or files
_DENIED_EXPR = re.compile(r"Reflect|UDF|UDAF|UDTF|Python|UserDefined|Avro|Protobuf|Xml|XPath|Script")
#: unresolved expressions of the parsed plan (names are checked separately)
_PARSED_EXPR = frozenset(_AN + n for n in (
    "UnresolvedAttribute", "UnresolvedStar", "UnresolvedStarExcept", "UnresolvedAlias", "UnresolvedFunction",
    "UnresolvedGenerator", "UnresolvedExtractValue", "UnresolvedRegex", "UnresolvedOrdinal", "UnresolvedSeed",
    "UnresolvedStarExceptOrReplace", "MultiAlias",
))
#: subquery expressions: their ``plan`` field is walked as a plan (QueryPlan.subqueries), not here
_SUBQUERY_EXPR = frozenset(f"{_EX}.{n}" for n in (
    "ScalarSubquery", "Exists", "ListQuery", "LateralSubquery", "FunctionTableSubqueryArgumentExpression"))

#: built-in functions refused although built in, and why
_DENIED_FUNCTIONS = {
    **dict.fromkeys(("reflect", "java_method", "try_reflect"), "calls Java methods by reflection"),
    **dict.fromkeys(("from_protobuf", "to_protobuf"), "loads Protobuf classes and descriptor files"),
    **dict.fromkeys(("from_avro", "to_avro", "schema_of_avro"), "loads the Avro module by reflection"),
    **dict.fromkeys(("from_xml", "schema_of_xml", "to_xml", "xpath", "xpath_boolean", "xpath_double",
                     "xpath_float", "xpath_int", "xpath_long", "xpath_number", "xpath_short", "xpath_string"),
                    "parses XML, whose external entities can read files or reach the network"),
}
_GENERATORS = frozenset({"explode", "explode_outer", "posexplode", "posexplode_outer", "inline", "inline_outer",
                         "stack", "json_tuple", "variant_explode", "variant_explode_outer"})
_TABLE_FUNCTIONS = _GENERATORS | {"range"}
_HINTS = frozenset({"BROADCAST", "BROADCASTJOIN", "MAPJOIN", "MERGE", "SHUFFLE_MERGE", "MERGEJOIN", "SHUFFLE_HASH",
                    "SHUFFLE_REPLICATE_NL", "COALESCE", "REPARTITION", "REPARTITION_BY_RANGE", "REBALANCE"})
_QUALIFIERS = {(), ("builtin",), ("system", "builtin")}
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")  # \Z: "$" passes a trailing newline

#: plain words for plan nodes strangers try
_NODE_WHY = {
    "ScriptTransformation": "TRANSFORM/MAP/REDUCE ... USING runs a program on the server",
    "InsertIntoDir": "INSERT ... DIRECTORY writes files on the server",
    "UnresolvedExecuteImmediate": "EXECUTE IMMEDIATE runs SQL text built at run time",
    "ExecuteImmediateQuery": "EXECUTE IMMEDIATE runs SQL text built at run time",
    "CompoundBody": "SQL scripts (BEGIN ... END) run several statements",
    "SingleStatement": "SQL scripts run several statements",
}

_SETUP = re.compile(r"^\s*CREATE\s+(OR\s+REPLACE\s+)?TEMPORARY\s+VIEW\s+([A-Za-z_][A-Za-z0-9_]*)\s+AS\s+(.+)$",
                    re.I | re.S)


class UnsafeSQL(ValueError):
    """The SQL (or a setting) may not run on a guarded server (message for people)."""


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"allowed": self.allowed, "reason": self.reason}


ALLOWED_REASON = "a single query over tables, views, range and inline tables"


def check_text(sql: Any) -> str:
    """What can be said without Spark: text, not empty, not too long. Returns it stripped."""
    if not isinstance(sql, str):
        raise UnsafeSQL("the statement must be text")
    text = sql.strip()
    if not text:
        raise UnsafeSQL("the query is empty")
    if len(text) > MAX_SQL_CHARS:
        raise UnsafeSQL(f"the query is longer than {MAX_SQL_CHARS:,} characters")
    if "\x00" in text:
        raise UnsafeSQL("the query holds a NUL character")
    if "${" in text:
        raise UnsafeSQL("the query holds ${...}: Spark would substitute the server's environment variables, JVM "
                        "properties or settings into it, so it is not allowed")
    return text


def check_sql(sql: str, spark: Any = None) -> str:
    """Return the query (stripped) if it may run, else raise :class:`UnsafeSQL` saying why.

    ``spark``: the PySpark session the query will run in (its temporary views are visible;
    the guard turns SQL on files off in it); None uses a session of the shared runtime
    (:func:`shared_guard_session`). Nothing is executed: the text is parsed and analysed only.
    """
    text = check_text(sql)
    _Guard(spark if spark is not None else shared_guard_session()).check_query(text)
    return text


def check_setup(stmt: str, spark: Any = None) -> str:
    """A setup statement of a capture or workload: only ``CREATE [OR REPLACE] TEMPORARY VIEW
    name AS <query>`` whose query passes :func:`check_sql`. Returns the statement to run (the
    view name and the checked query text, nothing else)."""
    text = check_text(stmt)
    m = _SETUP.match(text)
    if not m:
        raise UnsafeSQL("a setup statement may only be CREATE TEMPORARY VIEW <name> AS <query> "
                        "(no USING, OPTIONS, GLOBAL or column list)")
    name, query = m.group(2), m.group(3)
    guard = _Guard(spark if spark is not None else shared_guard_session())
    try:
        guard.check_query(check_text(query))
    except UnsafeSQL as exc:
        raise UnsafeSQL(f"setup view {name}: {exc}") from None
    out = f"CREATE OR REPLACE TEMPORARY VIEW {name} AS {query.strip()}"
    guard.expect_temp_view(out)
    return out


def verdict(sql: Any, spark: Any = None) -> Verdict:
    """:func:`check_sql` as a value (for ``check-sql``): never raises for bad SQL."""
    try:
        check_sql(sql, spark)
    except UnsafeSQL as exc:
        return Verdict(False, str(exc))
    return Verdict(True, ALLOWED_REASON)


def trusted_by_default() -> bool:
    """The server's ``trusted`` switch (``AQE_LENS_TRUSTED=1``); a broken settings file never
    lifts the guard."""
    from aqe_core.server_settings import SettingsError, server_settings

    try:
        return server_settings().trusted
    except SettingsError:
        return False


def guard_session(spark: Any) -> Any:
    """Turn off SQL on files and variable substitution in ``spark`` (a session a guarded query
    analyses or runs in): with substitution on, Spark's parser puts ``${env:NAME}``,
    ``${system:prop}`` and ``${spark:key}`` values into the text before anything sees it, and
    neither environment variables nor JVM properties are redacted. :func:`check_text` refuses
    ``${`` as well, so a query never depends on which of the two holds."""
    from aqe_core.config import RUN_SQL_ON_FILES, VARIABLE_SUBSTITUTE

    spark.conf.set(RUN_SQL_ON_FILES, "false")
    spark.conf.set(VARIABLE_SUBSTITUTE, "false")
    return spark


_SHARED: dict[str, Any] = {}
_SHARED_LOCK = threading.Lock()


def shared_guard_session() -> Any:
    """One session of the shared runtime for checks that have no run session of their own
    (renewed when the runtime is)."""
    from aqe_core.live.runtime import get_runtime

    rt = get_runtime()
    with _SHARED_LOCK:
        if _SHARED.get("runtime") is not rt:
            _SHARED.update(runtime=rt, session=guard_session(rt.spark.newSession()))
        return _SHARED["session"]


# ------------------------------------------------------------------------------------------
# the walk

_BUILTINS: dict[int, frozenset[str]] = {}


def _java_message(exc: BaseException) -> str:
    """First line of a Java exception's message (PySpark-converted or raw py4j)."""
    text = ""
    jexc = getattr(exc, "java_exception", None)
    if jexc is not None:
        try:
            text = str(jexc.getMessage())
        except Exception:  # noqa: BLE001 - py4j: the message may be unreadable
            text = ""
    if not text:
        getter = getattr(exc, "getMessage", None)
        try:
            text = str(getter()) if callable(getter) else str(exc)
        except Exception:  # noqa: BLE001 - py4j: the message may be unreadable
            text = str(exc)
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    first = lines[0] if lines else type(exc).__name__
    return first[:300]


def _parts(text: Any) -> Optional[list[str]]:
    """A ``Seq[String]`` as TreeNode JSON prints it (``"[builtin, reflect]"``); None if not one."""
    if not isinstance(text, str) or not (text.startswith("[") and text.endswith("]")):
        return None
    inner = text[1:-1]
    return inner.split(", ") if inner else []


class _Guard:
    def __init__(self, spark: Any) -> None:
        guard_session(spark)
        self.spark = spark
        self.jss = spark._jsparkSession
        self.jvm = spark.sparkContext._jvm
        self.nodes = 0
        # JVM classes looked up once: each ``jvm.a.b.C`` costs a reflection round trip per name
        self._create_array = self.jvm.org.apache.spark.sql.catalyst.expressions.CreateArray
        try:
            self._class_utils: Any = self.jvm.org.apache.commons.lang3.ClassUtils
        except Exception:  # noqa: BLE001 - py4j: no commons-lang3 on this classpath
            self._class_utils = None

    # -- entry points ----------------------------------------------------------------------
    def check_query(self, text: str) -> None:
        try:
            self._check_query(text)
        except UnsafeSQL:
            raise
        except Exception as exc:  # noqa: BLE001 - whatever the guard cannot judge is refused
            raise UnsafeSQL(f"the SQL guard could not check this query ({type(exc).__name__})") from None

    def _check_query(self, text: str) -> None:
        with self._active():
            parsed = self._parse(text)
            self._walk(parsed, analyzed=False)
            analyzed = self._analyze(parsed)
            self.nodes = 0
            self._walk(analyzed, analyzed=True)

    def expect_temp_view(self, stmt: str) -> None:
        """The rebuilt setup statement must parse as Spark's temporary-view command."""
        with self._active():
            plan = self._parse(stmt)
            name = str(plan.getClass().getSimpleName())
            if name not in ("CreateViewCommand", "CreateViewStatement", "CreateTempView"):
                raise UnsafeSQL(f"the setup statement is not a temporary view ({name})")

    # -- Spark -----------------------------------------------------------------------------
    @contextmanager
    def _active(self) -> Iterator[None]:
        """Make our session the JVM thread's active one: analyzer rules read SQLConf.get."""
        ss = self.jvm.org.apache.spark.sql.SparkSession
        prev = ss.getActiveSession()
        ss.setActiveSession(self.jss)
        try:
            yield
        finally:
            if prev.isDefined():
                ss.setActiveSession(prev.get())
            else:
                ss.clearActiveSession()

    def _parse(self, text: str) -> Any:
        try:
            return self.jss.sessionState().sqlParser().parsePlan(text)
        except Exception as exc:  # noqa: BLE001 - ParseException and friends
            raise UnsafeSQL(f"Spark cannot parse it as one statement: {_java_message(exc)}") from None

    def _analyze(self, plan: Any) -> Any:
        analyzer = self.jss.sessionState().analyzer()
        tracker_cls = self.jvm.org.apache.spark.sql.catalyst.QueryPlanningTracker
        try:
            tracker = tracker_cls(self.jvm.scala.Option.empty())  # Spark 3.5+
        except Exception:  # noqa: BLE001 - py4j: before 3.5 the constructor takes no argument
            tracker = tracker_cls()
        try:
            return analyzer.executeAndCheck(plan, tracker)
        except Exception as exc:  # noqa: BLE001 - AnalysisException and friends
            raise UnsafeSQL(f"Spark cannot analyse it: {_java_message(exc)}") from None

    def _builtins(self) -> frozenset[str]:
        key = id(self.jvm)
        names = _BUILTINS.get(key)
        if names is None:
            reg = self.jvm.org.apache.spark.sql.catalyst.analysis.FunctionRegistry.builtin()
            raw = str(reg.listFunction().mkString("\u0001")).split("\u0001")
            names = frozenset(n.removeprefix("system.builtin.").lower() for n in raw if n)
            _BUILTINS[key] = names
        return names

    @staticmethod
    def _seq(seq: Any) -> list[Any]:
        return [seq.apply(i) for i in range(int(seq.size()))]

    # -- plans -----------------------------------------------------------------------------
    def _class_name(self, obj: Any) -> str:
        """One round trip (``getClass().getName()`` takes two plus a proxy to release)."""
        if self._class_utils is not None:
            try:
                return str(self._class_utils.getName(obj, ""))
            except Exception:  # noqa: BLE001 - no commons-lang3 on this classpath
                self._class_utils = None
        return str(obj.getClass().getName())

    def _walk(self, root: Any, *, analyzed: bool) -> None:
        allowed = _ANALYZED_NODES if analyzed else _PARSED_NODES
        stack = [root]
        while stack:
            node = stack.pop()
            self.nodes += 1
            if self.nodes > MAX_PLAN_NODES:
                raise UnsafeSQL(f"the query plan has more than {MAX_PLAN_NODES:,} operators")
            cls = self._class_name(node)
            if cls not in allowed:
                raise UnsafeSQL(self._node_reason(node, cls))
            self._check_node(node, cls, analyzed)
            self._expressions(node, analyzed)
            stack.extend(self._seq(node.children()))
            # plans outside ``children``: subquery expressions' plans, and the CTE definitions
            # of UnresolvedWith/With (the only allowed nodes whose innerChildren are more than
            # their subqueries)
            if cls in _INNER_CHILDREN_NODES:
                stack.extend(self._seq(node.innerChildren()))
            stack.extend(self._seq(node.subqueries()))

    def _node_reason(self, node: Any, cls: str) -> str:
        simple = cls.rsplit(".", 1)[-1]
        if simple in _NODE_WHY:
            return f"{_NODE_WHY[simple]} ({simple})"
        try:
            is_command = bool(self.jvm.java.lang.Class.forName(_L + "Command").isInstance(node))
        except Exception:  # noqa: BLE001 - py4j: no such class on this release
            is_command = False
        if is_command or cls.startswith("org.apache.spark.sql.execution.command.") or simple.endswith(("Command", "Statement")):
            return f"only queries can run here; this is a command ({simple})"
        if simple.startswith("Unresolved") or "Relation" in simple:
            return f"only tables, views, range and inline tables can be queried here ({simple})"
        return f"the plan holds {simple}, which is not a query operator the SQL guard allows"

    def _check_node(self, node: Any, cls: str, analyzed: bool) -> None:
        if cls == _AN + "UnresolvedRelation":
            parts = [str(p) for p in self._seq(node.multipartIdentifier())]
            if not parts or not all(_PLAIN.match(p) for p in parts):
                shown = ".".join(f"`{p}`" for p in parts)[:200]
                raise UnsafeSQL(f"{shown} is not a table or view name; reading files by path is not allowed "
                                "(names are letters, digits and _)")
            if not node.options().isEmpty() or node.isStreaming():
                raise UnsafeSQL(f"table options and streaming reads are not allowed ({'.'.join(parts)})")
        elif cls == _AN + "UnresolvedTableValuedFunction":
            try:
                parts = [str(p) for p in self._seq(node.name())]  # Spark 3.4+: Seq[String]
            except Exception:  # noqa: BLE001 - py4j: before 3.4 name() is not a Seq
                try:
                    parts = [str(node.name().funcName())]  # 3.2, 3.3: a FunctionIdentifier
                except Exception:  # noqa: BLE001 - py4j: 3.0 and 3.1 have functionName()
                    parts = [str(node.functionName())]  # 3.0, 3.1
            fn = parts[-1].lower() if parts else ""
            if tuple(p.lower() for p in parts[:-1]) not in _QUALIFIERS or fn not in _TABLE_FUNCTIONS:
                raise UnsafeSQL(f"table function {'.'.join(parts)} is not allowed "
                                f"(allowed: {', '.join(sorted(_TABLE_FUNCTIONS))})")
        elif cls == _L + "UnresolvedHint":
            hint = str(node.name()).upper()
            if hint not in _HINTS:
                raise UnsafeSQL(f"hint {hint[:60]} is not a join or partitioning hint the SQL guard knows")
        elif cls == _L + "WithWindowDefinition":
            # a Map field: QueryPlan.expressions does not see the WINDOW clause's definitions
            try:
                specs = node.windowDefinitions().values().toSeq()
            except Exception:  # noqa: BLE001 - py4j: whatever the guard cannot read is refused
                raise UnsafeSQL("the SQL guard cannot read this query's WINDOW clause") from None
            if self._check_expr_seq(specs, analyzed)["subqueries"]:
                raise UnsafeSQL("subqueries in a WINDOW clause are not allowed")
        elif cls == _LOGICAL_RELATION:
            if not node.catalogTable().isDefined():
                raise UnsafeSQL("the query reads files by path; only catalog tables and views can be queried")
        elif cls == _V2_RELATION:
            if not (node.catalog().isDefined() and node.identifier().isDefined()):
                raise UnsafeSQL("the query reads a data source outside the catalog; only catalog tables and views "
                                "can be queried")

    # -- expressions -----------------------------------------------------------------------
    def _expressions(self, node: Any, analyzed: bool) -> dict[str, bool]:
        """Check every expression of one plan node; tell whether it holds subquery plans
        (walked by the caller)."""
        return self._check_expr_seq(node.expressions(), analyzed)

    def _check_expr_seq(self, exprs: Any, analyzed: bool) -> dict[str, bool]:
        """Check a Scala ``Seq[Expression]`` in one JSON round trip: wrapped in a CreateArray
        (built, never evaluated), its ``toJSON`` lists every node of every tree with its class."""
        ctor = self._create_array
        try:
            holder = ctor(exprs, False)
        except Exception:  # noqa: BLE001 - Spark before useStringTypeWhenEmpty
            holder = ctor(exprs)
        try:
            items = json.loads(str(holder.toJSON()))
        except Exception as exc:  # noqa: BLE001 - py4j: whatever the guard cannot read is refused
            raise UnsafeSQL(f"the SQL guard cannot read this query's expressions ({type(exc).__name__})") from None
        state = {"subqueries": False}
        self._check_exprs(items, holder, analyzed, state, top=True)  # items[0] is the CreateArray
        return state

    def _check_exprs(self, items: list[Any], holder: Any, analyzed: bool, state: dict[str, bool], *, top: bool) -> None:
        """``items``: one expression tree as TreeNode JSON (pre-order, each node's children
        following it). Every node is checked, and so is every tree nested in a node's other
        fields (a subquery's plan excepted: the plan walk checks it)."""
        for idx, item in enumerate(items):
            if not isinstance(item, dict) or "class" not in item:
                raise UnsafeSQL("the SQL guard cannot read this query's expressions")
            cls = str(item["class"])
            self._check_expr(cls, item, analyzed, lambda i=idx: self._nth(holder, items, i) if top else None)
            for field, value in item.items():
                if field == "plan" and cls in _SUBQUERY_EXPR:
                    state["subqueries"] = True
                else:
                    self._nested(value, holder, analyzed, state)

    def _nested(self, value: Any, holder: Any, analyzed: bool, state: dict[str, bool]) -> None:
        if isinstance(value, list):
            if value and all(isinstance(v, dict) and "class" in v for v in value):
                self._check_exprs(value, holder, analyzed, state, top=False)
            else:
                for v in value:
                    self._nested(v, holder, analyzed, state)
        elif isinstance(value, dict):
            if "class" in value:
                self._check_exprs([value], holder, analyzed, state, top=False)
            else:
                for v in value.values():
                    self._nested(v, holder, analyzed, state)

    def _check_expr(self, cls: str, item: dict[str, Any], analyzed: bool, obj: Any) -> None:
        pkg, _, simple = cls.rpartition(".")
        if not analyzed and cls == _AN + "UnresolvedFunction":
            self._check_function(item, obj)
            return
        if not analyzed and cls == _AN + "UnresolvedGenerator":
            name = item.get("name") or {}
            parts = [p for p in (name.get("catalog"), name.get("database"), name.get("funcName")) if p]
            self._check_function_name([str(p) for p in parts], generator=True)
            return
        if not analyzed and cls in _PARSED_EXPR:
            return
        if simple in ("ExpressionWithUnresolvedIdentifier", "PlanWithUnresolvedIdentifier"):
            raise UnsafeSQL("IDENTIFIER(...) as a function or table name is not allowed: the SQL guard must see "
                            "every name in the text")
        if pkg not in _EXPR_PACKAGES:
            raise UnsafeSQL(f"the expression {simple} is not one of Spark's built-in expressions the SQL guard allows")
        if _DENIED_EXPR.search(simple):
            raise UnsafeSQL(f"{simple} calls into the JVM or runs user code, so it is not allowed")

    def _nth(self, holder: Any, items: list[Any], index: int) -> Any:
        """The JVM object of the ``index``-th node (pre-order) of ``holder``'s expression tree."""
        obj = holder
        for k in self._path(items, index):
            obj = obj.children().apply(k)
        return obj

    @staticmethod
    def _path(items: list[Any], index: int) -> list[int]:
        """Child ordinals from the root to the ``index``-th node of a pre-order node list
        (each node says how many children follow it); iterative, so deep trees are fine."""
        frames: list[list[int]] = []  # per open ancestor: [ordinal of the child being visited, children]
        for i, item in enumerate(items):
            if frames:
                frames[-1][0] += 1
            if i == index:
                return [f[0] for f in frames]
            n = int(item.get("num-children", 0)) if isinstance(item, dict) else 0
            if n:
                frames.append([-1, n])
                continue
            while frames and frames[-1][0] == frames[-1][1] - 1:
                frames.pop()
        raise UnsafeSQL("the SQL guard cannot read this query's expressions")

    def _check_function(self, item: dict[str, Any], obj: Any) -> None:
        if item.get("isInternal"):
            raise UnsafeSQL("Spark's internal functions are not allowed")
        parts = _parts(item.get("nameParts"))
        old = item.get("name")  # Spark before 3.3: a FunctionIdentifier
        if parts is None and isinstance(old, dict) and isinstance(old.get("funcName"), str):
            parts = [str(p) for p in (old.get("database"), old.get("funcName")) if p]
            if not all(_PLAIN.match(p) for p in parts):
                raise UnsafeSQL(f"function {'.'.join(parts)[:100]} is not one of Spark's built-in functions")
            self._check_function_name(parts)
            return
        if parts is None:
            raise UnsafeSQL("the SQL guard cannot read a function name in this query")
        if len(parts) != 1 or not _PLAIN.match(parts[0]):
            # "[a, b]" is also how the one name `a, b` prints: ask the JVM for the real parts
            target = obj() if callable(obj) else None
            if target is None:
                raise UnsafeSQL(f"function {'.'.join(parts)[:100]} is not one of Spark's built-in functions")
            parts = [str(p) for p in self._seq(target.nameParts())]
        self._check_function_name(parts)

    def _check_function_name(self, parts: list[str], *, generator: bool = False) -> None:
        shown = ".".join(parts)[:100]
        if not parts:
            raise UnsafeSQL("a function without a name is not allowed")
        fn = parts[-1].lower()
        if fn in _DENIED_FUNCTIONS:
            raise UnsafeSQL(f"function {shown} {_DENIED_FUNCTIONS[fn]}, so it is not allowed")
        if tuple(p.lower() for p in parts[:-1]) not in _QUALIFIERS or fn not in self._builtins():
            raise UnsafeSQL(f"function {shown} is not one of Spark's built-in functions "
                            "(user functions run code, so only built-ins are allowed)")
        if generator and fn not in _GENERATORS:
            raise UnsafeSQL(f"generator {shown} is not allowed (allowed: {', '.join(sorted(_GENERATORS))})")
