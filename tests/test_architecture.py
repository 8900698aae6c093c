"""Structure ratchets (issue 9): every module imports on its own, no import cycles (imports
inside functions included), imports only point down the layers of docs/architecture.md, no
``spark.sql.*`` key spelled outside ``config.py``, no module over 600 lines, no function over 80.

Tools, tests and bench scripts are outside these limits. Users import :mod:`aqe_core.api`; an old
import path kept as a re-export would be listed in ``COMPAT`` (none is, since issue 26).
"""
from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE_DIRS = ("aqe_core", "ui")
#: scripts Streamlit runs: sizes and layers are checked, they are not imported in isolation
SCRIPTS = ("app.py", "pages")



def _files() -> list[Path]:
    return sorted(p for d in CODE_DIRS if (ROOT / d).exists() for p in (ROOT / d).rglob("*.py"))


def _scripts() -> list[Path]:
    out = []
    for name in SCRIPTS:
        path = ROOT / name
        out += sorted(path.glob("*.py")) if path.is_dir() else [path] if path.exists() else []
    return out


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """Project modules ``path`` imports anywhere (functions included); a package's own
    ``__init__`` is no cycle."""
    me = _module(path)
    return {target for _, target in _import_lines(path, modules) if not me.startswith(target + ".")}


def _cycles(graph: dict[str, set[str]]) -> set[tuple[str, ...]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: set[tuple[str, ...]] = set()
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    m = stack.pop()
                    on.discard(m)
                    comp.append(m)
                    if m == node:
                        break
                if len(comp) > 1:
                    found.add(tuple(sorted(comp)))
    return found


def test_no_new_import_cycles():
    files = _files()
    modules = {_module(p) for p in files}
    graph = {_module(p): _imports(p, modules) for p in files}
    assert _cycles(graph) == set()


def test_sizes_within_limits_or_known():
    big_modules, big_functions = set(), set()
    for path in _files() + _scripts():
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > 600:
            big_modules.add(rel)
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                if node.end_lineno - start + 1 > 80:
                    big_functions.add(f"{rel}:{node.name}")
    assert sorted(big_modules) == []
    assert sorted(big_functions) == []


def test_every_module_imports_on_its_own():
    """One fresh interpreter forks once per module, so no module leans on another having been
    imported first (third-party packages are preloaded: they cannot hide a project cycle)."""
    modules = sorted(_module(p) for p in _files() if _module(p) != "aqe_core.__main__")
    script = textwrap.dedent("""
        import importlib, os, sys, traceback
        for pre in ("pandas", "plotly.graph_objects", "networkx"):
            importlib.import_module(pre)
        failed = []
        for m in sys.argv[1:]:
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                try:
                    importlib.import_module(m)
                    os._exit(0)
                except BaseException:
                    os.write(w, traceback.format_exc(limit=3).encode()[-2000:])
                    os._exit(1)
            os.close(w)
            err = os.read(r, 4000).decode(errors="replace")
            os.close(r)
            _, status = os.waitpid(pid, 0)
            if status:
                failed.append(m + ": " + err)
        print("\\n".join(failed))
        sys.exit(1 if failed else 0)
    """)
    proc = subprocess.run([sys.executable, "-c", script, *modules], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# --------------------------------------------------------------------------------------
# Layers (docs/architecture.md): a module may import its own layer and the layers listed.

LAYERS: dict[str, tuple[str, ...]] = {
    "base": ("aqe_core", "aqe_core.versions", "aqe_core.config", "aqe_core.units", "aqe_core.plain_text",
             "aqe_core.storage", "aqe_core.server_settings", "aqe_core.listener", "aqe_core.exception_text"),
    "model": ("aqe_core.model",),
    "readers": ("aqe_core.readers",),
    "rules": ("aqe_core.rules",),
    "engine": ("aqe_core.engine",),
    "advise": ("aqe_core.advise",),
    "views": ("aqe_core.views",),
    "live": ("aqe_core.live",),
    "open": ("aqe_core.opening", "aqe_core.listing_consumers", "aqe_core.share", "aqe_core.user_presets",
             "aqe_core.source_cache"),
    "fleet": ("aqe_core.fleet",),
    "figures": ("aqe_core.figures",),
    "report": ("aqe_core.report",),
    "api": ("aqe_core.api",),
    "cli": ("aqe_core.cli", "aqe_core.__main__", "aqe_core.mcp"),  # the MCP server: the CLI's answers over MCP
    "ui": ("ui", "app", "pages"),
}
ALLOWED: dict[str, set[str]] = {
    "base": {"base"},
    "model": {"base"},
    "readers": {"base", "model"},
    "rules": {"base", "model"},
    "engine": {"base", "model", "rules"},
    "advise": {"base", "model", "engine"},  # every "what would happen if"; rules only through the engine
    "views": {"base", "model", "engine", "advise"},
    "live": {"base", "model", "readers"},
    "open": {"base", "model", "readers", "engine", "views"},
    "fleet": {"base", "model", "advise", "views", "open"},  # the scan job: sources and views in each executor
    "figures": {"base", "model", "views"},
    "report": {"base", "model", "advise", "views", "figures"},
    "api": {"base", "model", "readers", "engine", "advise", "views", "live", "open", "figures"},  # the documented entry point
    "cli": {"base", "model", "readers", "engine", "advise", "views", "live", "open", "fleet", "figures", "report"},  # rules: through the engine
    "ui": {"base", "model", "engine", "advise", "views", "open", "fleet", "figures", "report", "live"},
}
#: old import paths kept as thin re-exports (``# compat shim``): none since issue 26, where the
#: facades (aqe_core.capture, .eventlog, .plan_graph) and the rule shims gave way to aqe_core.api
COMPAT: set[str] = set()


def _layer(module: str) -> str | None:
    best = None
    for layer, prefixes in LAYERS.items():
        for prefix in prefixes:
            inside = module == prefix or (layer != "base" and module.startswith(prefix + "."))
            if inside and (best is None or len(prefix) > len(best[1])):
                best = (layer, prefix)
    return best[0] if best else None


def _all_modules() -> dict[str, Path]:
    out = {_module(p): p for p in _files()}
    for path in _scripts():
        out[_module(path)] = path
    return out


def _import_lines(path: Path, modules: set[str]) -> list[tuple[int, str]]:
    """(line, project module) for every import anywhere in ``path``, functions included, and
    every ``importlib.import_module("...")`` with a literal name."""
    me = _module(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            names = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules] or [base]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in
              ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            names = [node.args[0].value]
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != me:
                out.append((node.lineno, name))
    return out


def test_imports_point_down_the_layers():
    modules = _all_modules()
    unplaced, problems = set(), []
    for module, path in modules.items():
        if module in COMPAT:
            continue
        layer = _layer(module)
        if layer is None:
            unplaced.add(module)
            continue
        rel = path.relative_to(ROOT).as_posix()
        for line, target in _import_lines(path, set(modules)):
            if target in COMPAT:
                problems.append(f"{rel}:{line} imports {target} (an old path kept for users; import the new one)")
                continue
            to = _layer(target)
            if to is None or to == layer or to in ALLOWED[layer] or module.startswith(target + "."):
                continue
            problems.append(f"{rel}:{line} imports {target} (layer {layer} -> layer {to} not allowed)")
    assert sorted(unplaced) == [], "modules outside every layer (add them to LAYERS or move them)"
    assert problems == []


_KEY_RE = __import__("re").compile(r"(?<![\w.])spark\.sql\.")


def _key_literals(path: Path) -> int:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return sum(1 for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
               and id(n) not in docs and _KEY_RE.search(n.value))


def test_config_keys_only_spelled_in_config():
    """``config.py`` is the registry; everything else uses its handles (``config.SHUFFLE_PARTITIONS``)."""
    found = {}
    for path in _files() + _scripts():
        rel = path.relative_to(ROOT).as_posix()
        if rel in ("aqe_core/config.py",) or not path.exists() or _module(path) in COMPAT:
            continue
        n = _key_literals(path)
        if n:
            found[rel] = n
    assert found == {}


def test_config_handles_are_registry_keys():
    from aqe_core import config
    names = set(config.all_key_names())
    handles = {n: v for n, v in vars(config).items() if n.isupper() and isinstance(v, str)
               and v.startswith("spark.sql.") and not v.endswith(".")}
    extra = {"EXECUTION_ID_KEY", "UI_RETAINED_EXECUTIONS", "RUN_SQL_ON_FILES", "VARIABLE_SUBSTITUTE",
             "SHUFFLE_ORDER_INDEPENDENT_CHECKSUM_ENABLED", "SHUFFLE_CHECKSUM_MISMATCH_FULL_RETRY_ENABLED",
             "SQL_EXTENSIONS"}
    assert {n for n, v in handles.items() if v not in names} <= extra


def test_core_never_imports_streamlit_and_only_live_imports_spark():
    """Spark is imported where Spark runs: live runs and captures, the fleet scan's job, the CLI."""
    bad = []
    for path in _files():
        module = _module(path)
        if not module.startswith("aqe_core"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            for name in names:
                top = name.split(".")[0]
                if top == "streamlit" or (top in ("pyspark", "py4j") and _layer(module) not in (None, "live", "fleet", "cli")):
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {name}")
    assert bad == []


def test_compat_list_is_the_marked_modules():
    marked = {m for m, path in _all_modules().items() if "# compat shim (issue 9)" in path.read_text(encoding="utf-8")}
    assert marked == COMPAT


def _release_comparisons(path: Path) -> int:
    """Comparisons with a literal release (``v >= SparkVersion(3, 2, 0)``) in ``path``."""
    def is_release(n: ast.AST) -> bool:
        return isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", "")) == "SparkVersion"
    return sum(1 for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.Compare)
               and any(is_release(x) for x in [n.left, *n.comparators]))


def test_views_ask_the_rules_about_releases():
    """Release differences live in the rules or the pipeline (a function the view calls, like
    ``engine.pipeline.skew_after_coalescing``); a view does not compare releases itself."""
    found = {p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "aqe_core" / "views").rglob("*.py"))
             if _release_comparisons(p)}
    assert found == set()


def test_every_rule_has_its_test_file():
    """One test file per rule module (``tests/rules/test_<module>.py``: its oracle cases, suite
    ports and properties together), so "where is the skew rule tested?" opens one file."""
    modules = {p.stem for p in (ROOT / "aqe_core" / "rules").glob("*.py") if p.stem != "__init__"}
    missing = sorted(m for m in modules if not (ROOT / "tests" / "rules" / f"test_{m}.py").is_file())
    assert missing == [], f"rules without tests/rules/test_<module>.py: {missing}"
