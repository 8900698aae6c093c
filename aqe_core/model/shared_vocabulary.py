"""The reason codes and the trace condition more than one rule gives, each with one meaning.

Here, in the model, because the rules, the engine and the views all give or read them; a rule's
own codes are declared in its module (``aqe_core/rules/<spark_rule>.py``).

A rule that gives one of these re-declares it with its own sentence
(``Vocabulary.reuse(SPLIT, "...")``), so the code keeps the meaning written here and the rule
module still holds every sentence it says. The codes the engine gives about the rules (the
final-stage filter of ``AdaptiveSparkPlanExec``) are here too, because the rules' trace
conditions name them.
"""
from __future__ import annotations

from aqe_core.model.vocabulary import Vocabulary

V = Vocabulary("shared", __name__)

SPLIT = V.code("split", "A skewed (or oversized) partition was cut into parts by its map outputs"
               " (``ShufflePartitionsUtil.createSkewPartitionSpecs``).")
NO_SPLIT = V.code("no_split", "The skew rule looked at the join (or the streamed side) and split no partition:"
                  " none is over the skew threshold, or none could be cut.")
NOT_SPLITTABLE = V.code("not_splittable_by_maps", "A skewed partition's map outputs cannot be cut into two or more"
                        " parts of about the target size, so it stays whole.")
MAP_SIZES_UNKNOWN = V.code("map_sizes_unknown", "The per-map sizes of a shuffle (or of one skewed partition) are not"
                           " known, so a split cannot be computed.")
DISTRIBUTION_BROKEN = V.code("distribution_broken", "The rule's change was dropped: it would break the"
                             " distribution the plan requires (Spark would need an extra shuffle).")
DISABLED = V.code("disabled", "The rule's own enabling setting is false: it does nothing.")
NOT_IN_VERSION = V.code("not_in_version", "This Spark release has no such rule.")
FINAL_STAGE_RULE_EXCLUDED = V.code(
    "final_stage_rule_excluded", "Spark 3.1's ``finalStageOptimizerRules`` leaves this rule out on the final stage"
    " (a shuffle origin it does not support); ``numbers['rule']`` names the rule.",
    "{rule} does not run on the final stage: the query has a shuffle whose origin it does not support ({origins}),"
    " so the final partitioning is kept (Spark 3.1)", per_rule=True)
FINAL_STAGE_RULES_OFF = V.code(
    "final_stage_rules_off", "``applyFinalStageShuffleOptimizations=false`` (3.4.2+): no shuffle-read rule runs on"
    " the final stage; ``numbers['rule']`` names the rule.",
    "{rule} does not run on the final stage: applyFinalStageShuffleOptimizations=false", per_rule=True)

MAP_OUTPUTS_CUT = V.condition(
    "split.map_outputs_cut", "its map outputs can be cut into parts",
    "A skewed partition is split only when its map outputs give two or more parts of about the target size.",
    fails=(NOT_SPLITTABLE, MAP_SIZES_UNKNOWN), meets=(SPLIT,))
