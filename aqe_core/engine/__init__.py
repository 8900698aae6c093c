"""The engine: Spark's AQE pipeline per release, run over a query's stage plan by calling
:mod:`aqe_core.rules`, with join replanning and the agreement report. The only caller of rules.
"""
from aqe_core.capture.simulate import (  # moving here in issue 9 (WP1)
    Agreement, JoinResult, QueryResult, ReadResult, SimulationReport, simulate, simulate_query,
)

__all__ = ["Agreement", "JoinResult", "QueryResult", "ReadResult", "SimulationReport", "simulate", "simulate_query"]
