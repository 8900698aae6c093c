"""Plan-graph speed: the boxes and their layered layout, and the whole figure, for production
plans (the recorded TPC-DS-like Spark 4.3 plans, 66-336 nodes) and synthetic plans of 500 and
2,000 nodes, in the default stage view and with every operator drawn. Each figure is printed
beside what Streamlit pays for the same figure on every rerun anyway (its JSON), as a ratio: a
ratio holds on a noisy machine. Asserts nothing.

    python -m bench.bench_plan_layout
    (a page switch on the 300-node plan against a no-op rerun, in a browser:
     python -m bench.bench_ui sample_logs/eventlogs/local-1795649029734.zstd --query 32)
"""
from __future__ import annotations

from pathlib import Path

from aqe_core.figures.plan_blocks import box_graph
from aqe_core.figures.plan_figure import _Frame, node_kind, plan_figure
from aqe_core.figures.synthetic import synthetic_plan
from aqe_core.opening import load_source
from aqe_core.views.plan_diff import diff_plans
from bench.timing import timeit

ROOT = Path(__file__).resolve().parents[1]

BIG_LOG = ROOT / "sample_logs" / "eventlogs" / "local-1795649029734.zstd"


def cases():
    src = load_source(str(BIG_LOG))
    for v in src.views:
        if v.description in ("q72-like", "q88-like", "dozen-joins"):
            yield f"{v.description} final", v.final_plan, diff_plans(v.initial_plan, v.final_plan)
    for n in (500, 2000):
        yield f"synthetic n={n}", synthetic_plan(n, seed=7), None


def main() -> None:
    plan_figure(synthetic_plan(50, seed=0))  # warm-up (imports, plotly validators)
    print(f"{'plan':<22}{'nodes':>6} {'view':<10}{'boxes':>6}{'width px':>9}  {'layout':>8}  {'figure':>8}  "
          f"{'its JSON':>8}  {'figure / JSON':>13}")
    for name, plan, diff in cases():
        n = sum(1 for _ in plan.walk())
        for view, expanded in (("stages", ()), ("operators", "all")):
            bg = box_graph(plan, expanded, kind_of=node_kind)
            lmin, _ = timeit(lambda: _Frame(plan, box_graph(plan, expanded, kind_of=node_kind), diff, "after"), 5)
            fig = plan_figure(plan, changes=diff, expanded=expanded)
            fmin, _ = timeit(lambda: plan_figure(plan, changes=diff, expanded=expanded), 5)
            jmin, _ = timeit(lambda: fig.to_json(), 5)
            print(f"{name:<22}{n:>6} {view:<10}{len(bg):>6}{fig.layout.meta['plan_width']:>9.0f}  {lmin:>7.3f}s  "
                  f"{fmin:>7.3f}s  {jmin:>7.3f}s  {fmin / jmin:>12.1f}x")


if __name__ == "__main__":
    main()
