"""The engine: Spark's AQE pipeline per release, run over a query's stage plan by calling
:mod:`aqe_core.rules`, with join replanning and the agreement report. The only caller of rules.

Modules: :mod:`.simulate` (entry points), :mod:`.pipeline` (the rule order per release, as
data, each step a rule module's ``apply``), :mod:`.stage_plan` (the fragments rules see),
:mod:`.replan_joins` (join strategies), :mod:`.adaptive` (did AQE apply: InsertAdaptiveSparkPlan
on a recorded plan), :mod:`.results` (what a run returns), :mod:`.spec_sizes` (what a read's specs
read), :mod:`.estimate` (the rules over a plain log's post-AQE sizes). Every "what would happen
if" over these is :mod:`aqe_core.advise`.
"""
from aqe_core.engine.adaptive import AdaptiveVerdict, adaptive_verdict
from aqe_core.engine.results import Agreement, JoinResult, QueryResult, ReadResult, SimulationReport
from aqe_core.engine.simulate import one_query, simulate, simulate_query

__all__ = ["AdaptiveVerdict", "Agreement", "JoinResult", "QueryResult", "ReadResult", "SimulationReport",
           "adaptive_verdict", "one_query", "simulate", "simulate_query"]
