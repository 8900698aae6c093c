"""Structure ratchets (issue 9): every module imports on its own, no import cycles (imports
inside functions included), no module over 600 lines, no function over 80.

Today's exceptions are listed below; a listed exception that no longer occurs fails too, so the
lists only shrink. The layering test of issue 9 joins these once the layers exist.
"""
from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE_DIRS = ("aqe_core",)

#: import cycles known today (sorted module names per strongly connected component)
KNOWN_CYCLES = {("aqe_core.capture_view", "aqe_core.compare", "aqe_core.sources")}
#: modules over 600 lines known today
KNOWN_BIG_MODULES = {"aqe_core/eventlog/reader.py", "aqe_core/capture/simulate.py", "aqe_core/capture/model.py",
                     "aqe_core/capture/capture.py", "aqe_core/plan_graph/figure.py", "aqe_core/plan_graph/diff.py"}
#: functions over 80 lines known today
KNOWN_BIG_FUNCTIONS = {"aqe_core/plan_graph/figure.py:plan_figure", "aqe_core/plan_graph/layout.py:tidy_x",
                       "aqe_core/eventlog/reader.py:_load_source", "aqe_core/plan_graph/layout.py:layout_plan",
                       "aqe_core/plan_graph/diff.py:diff_plans", "aqe_core/rules/skew_join.py:optimize_skewed_join",
                       "aqe_core/capture/cli_run.py:run", "aqe_core/capture/simulate.py:_skew_join",
                       "aqe_core/plan_graph/diff.py:_match"}


def _files() -> list[Path]:
    return sorted(p for d in CODE_DIRS for p in (ROOT / d).rglob("*.py"))


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """Project modules ``path`` imports anywhere (functions included), resolved to modules."""
    me = _module(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            names = [f"{base}.{a.name}" for a in node.names] + [base]
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != me and not me.startswith(name + "."):  # a package's own __init__ is no cycle
                out.add(name)
    return out


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
    assert _cycles(graph) == KNOWN_CYCLES


def test_sizes_within_limits_or_known():
    big_modules, big_functions = set(), set()
    for path in _files():
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > 600:
            big_modules.add(rel)
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                if node.end_lineno - start + 1 > 80:
                    big_functions.add(f"{rel}:{node.name}")
    assert big_modules == KNOWN_BIG_MODULES
    assert big_functions == KNOWN_BIG_FUNCTIONS


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
