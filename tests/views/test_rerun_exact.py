"""``advise.verify.rerun_exact`` switches on the outcome's reason codes, never on its note: a read
the replay could not size makes the answer "no"; a stage it predicts is never created is a
prediction checked against the re-run like any other (no Spark needed: the re-run is a recorded
one)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from aqe_core.advise.verify import rerun_exact
from aqe_core.advise.whatif import query_what_if, simulate_preset
from aqe_core.engine.results import NOT_PREDICTED, STAGE_NOT_CREATED
from aqe_core.model.presets import BUILTIN_PRESETS, Preset
from aqe_core.opening import load_source

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"
ACTUAL = next(p for p in BUILTIN_PRESETS if p.name == "actual")


def _below_static_predicted_and_run():
    """3.5.9 ``broadcast_union``: the ``adaptive_above_static`` recording replayed under the
    ``adaptive_below_static`` settings (the union fits the static threshold as soon as its two
    stages finish, so the stage above it is never created), and Spark's own run of that preset."""
    source = load_source(str(CAPTURES / "3.5.9" / "broadcast_union.json.gz"))
    above, below = source.view("1"), source.view("2")
    assert (above.description, below.description) == ("broadcast_union/adaptive_above_static",
                                                      "broadcast_union/adaptive_below_static")
    settings = {k: below.conf.raw(k) for k in ("spark.sql.autoBroadcastJoinThreshold",
                                               "spark.sql.adaptive.autoBroadcastJoinThreshold")}
    conf = Preset("below", "", settings).conf_for(above.conf)
    sim = query_what_if(above, conf, "below", lines=False).outcome
    return sim, simulate_preset(below, ACTUAL)


def test_a_stage_predicted_not_created_is_checked_against_the_rerun():
    sim, spark = _below_static_predicted_and_run()
    assert sim.unsized_codes == [STAGE_NOT_CREATED]
    assert "never created" in sim.note  # said to people, but not what the verdict reads
    assert rerun_exact(sim, spark) == "yes"


def test_a_read_not_predicted_is_never_exact():
    sim, spark = _below_static_predicted_and_run()
    unsized = replace(sim, unsized_codes=[NOT_PREDICTED], note="a note that names nothing")
    assert rerun_exact(unsized, spark) == "no: some reads are not predicted (see the preset's note)"
    assert rerun_exact(replace(sim, note=sim.note + "; not predicted"), spark) == "yes"  # codes, not words
