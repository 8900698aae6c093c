"""Compatibility path (issue 9): split by Spark class into
:mod:`aqe_core.rules.demote_broadcast_hash_join`, :mod:`aqe_core.rules.dynamic_join_selection`,
:mod:`aqe_core.rules.convert_sort_merge_join_to_shuffled_hash_join` and
:mod:`aqe_core.rules.join_selection_helper`; every public name stays importable from here."""
# compat shim (issue 9)
from aqe_core.rules.convert_sort_merge_join_to_shuffled_hash_join import (  # noqa: F401
    ShuffledHashJoinChoice,
    choose_shuffled_hash_join_build_side,
)
from aqe_core.rules.demote_broadcast_hash_join import NO_BROADCAST_HASH, has_many_empty_partitions  # noqa: F401
from aqe_core.rules.dynamic_join_selection import (  # noqa: F401
    PREFER_SHUFFLE_HASH,
    SHUFFLE_HASH,
    JoinSideHint,
    prefer_shuffled_hash_join,
    select_join_hints,
)
from aqe_core.rules.join_selection_helper import (  # noqa: F401
    broadcast_threshold,
    can_broadcast_by_size,
    can_build_broadcast_left,
    can_build_broadcast_right,
)
