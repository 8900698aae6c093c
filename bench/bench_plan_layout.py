"""Plan-graph speed (issue target: layout of a 1,000-node plan <= 0.3 s). Prints figures for
plan-like random trees of 1,000 and 5,000 nodes and a 2,000-deep chain; asserts nothing.

    python bench/bench_plan_layout.py
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import timeit  # noqa: E402

from aqe_core.plan_graph import diff_plans, layout_plan, plan_figure  # noqa: E402
from aqe_core.figures.synthetic import chain_plan, synthetic_plan


def main() -> None:
    plan_figure(synthetic_plan(50, seed=0))  # warm-up (imports, plotly validators)
    print(f"{'plan':<28}{'nodes':>7}{'drawn':>7}{'depth':>7}  {'layout min/med':>16}  {'figure min/med':>16}  "
          f"{'JSON':>8}  {'diff':>7}")
    cases = [(f"plan-like random n={n}", synthetic_plan(n, seed=7)) for n in (1000, 5000)]
    cases.append(("chain n=2000", chain_plan(2000)))
    for name, plan in cases:
        n = sum(1 for _ in plan.walk())
        lay = layout_plan(plan)
        lmin, lmed = timeit(lambda: layout_plan(plan), 7)
        fmin, fmed = timeit(lambda: plan_figure(plan, layout=lay), 3)
        size = len(plan_figure(plan, layout=lay).to_json())
        dmin, _ = timeit(lambda: diff_plans(plan, plan), 3)
        print(f"{name:<28}{n:>7}{len(lay):>7}{lay.max_depth:>7}  {lmin:>7.3f}/{lmed:<7.3f}s  {fmin:>7.3f}/{fmed:<7.3f}s  "
              f"{size / 1e6:>6.2f}MB  {dmin:>6.3f}s")


if __name__ == "__main__":
    main()
