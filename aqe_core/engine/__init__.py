"""The engine: Spark's AQE pipeline per release, run over a query's stage plan by calling
:mod:`aqe_core.rules`, with join replanning and the agreement report. The only caller of rules.

Modules: :mod:`.simulate` (entry points), :mod:`.pipeline` (the rule order per release, as
data, each step a rule module's ``apply``), :mod:`.stage_plan` (the fragments rules see),
:mod:`.replan_joins` (join strategies), :mod:`.adaptive` (did AQE apply: InsertAdaptiveSparkPlan
on a recorded plan), :mod:`.results` (what a run returns).
"""
from aqe_core.engine.adaptive import AdaptiveVerdict, adaptive_verdict
from aqe_core.engine.results import Agreement, JoinResult, QueryResult, ReadResult, SimulationReport
from aqe_core.engine.simulate import simulate, simulate_query

__all__ = ["AdaptiveVerdict", "Agreement", "JoinResult", "QueryResult", "ReadResult", "SimulationReport",
           "adaptive_verdict", "simulate", "simulate_query"]
