"""The reason codes and trace conditions that layers above the engine switch on.

Each is declared by the rule module that owns it (:mod:`aqe_core.model.vocabulary`); advise,
views and the CLI reach the rules only through the engine, so they import these names from here,
never the string (``tests/model/test_vocabulary_literals.py``).
"""
from aqe_core.model.shared_vocabulary import FINAL_STAGE_RULES_OFF, MAP_OUTPUTS_CUT, NO_SPLIT, SPLIT
from aqe_core.rules import optimize_skewed_join as _osj, optimize_skewed_join_stream as _stream
from aqe_core.rules.coalesce_shuffle_partitions import (
    COALESCED, MIN_NUM_FROM_CONF, MIN_NUM_FROM_PARALLELISM, MIN_NUM_ONE)
from aqe_core.rules.convert_sort_merge_join_to_shuffled_hash_join import CONVERT_TO_SHJ
from aqe_core.rules.dynamic_join_selection import DEMOTE_BROADCAST, PREFER_SHUFFLED_HASH
from aqe_core.rules.join_selection_helper import (
    BROADCAST_BEFORE_STAGE, BROADCAST_OFF, CANNOT_BUILD_SIDE, DEMOTED, PLANNED_BROADCAST, RUNTIME_BROADCAST, SIZE_UNKNOWN,
    TOO_BIG_TO_BROADCAST)
from aqe_core.rules.optimize_skewed_join import DISTRIBUTION_BROKEN, FORCED, SKEW_JOIN_DISABLED, SKEW_JOIN_ERROR

#: OptimizeSkewedJoin's trace conditions (ids: ``skew.enabled`` ...), and its streamed-side case's
SKEW_ENABLED, SKEW_NO_EXTRA_SHUFFLE, SKEW_OVER_THRESHOLD = _osj.ENABLED, _osj.NO_EXTRA_SHUFFLE, _osj.OVER_THRESHOLD
STREAM_OVER_THRESHOLD = _stream.OVER_THRESHOLD

__all__ = ["BROADCAST_BEFORE_STAGE", "BROADCAST_OFF", "CANNOT_BUILD_SIDE", "COALESCED", "CONVERT_TO_SHJ", "DEMOTED",
           "DEMOTE_BROADCAST", "DISTRIBUTION_BROKEN", "FINAL_STAGE_RULES_OFF", "FORCED", "MAP_OUTPUTS_CUT",
           "MIN_NUM_FROM_CONF", "MIN_NUM_FROM_PARALLELISM", "MIN_NUM_ONE", "NO_SPLIT", "PLANNED_BROADCAST",
           "PREFER_SHUFFLED_HASH", "RUNTIME_BROADCAST", "SIZE_UNKNOWN", "SKEW_ENABLED", "SKEW_JOIN_DISABLED",
           "SKEW_JOIN_ERROR", "SKEW_NO_EXTRA_SHUFFLE", "SKEW_OVER_THRESHOLD", "SPLIT", "STREAM_OVER_THRESHOLD",
           "TOO_BIG_TO_BROADCAST"]
