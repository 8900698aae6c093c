"""Compatibility path (issue 9): split into :mod:`aqe_core.live.event_tap` (the event log tap)
and :mod:`aqe_core.live.recorder` (the plan and statistics recorder)."""
# compat shim (issue 9)
from aqe_core.live.event_tap import (  # noqa: F401
    _SQL_START,
    _SQL_UPDATE,
    _SQL_END,
    _WANTED,
    _Execution,
    EventLogTap,
)
from aqe_core.live.recorder import (  # noqa: F401
    DEFAULT_MAP_SIZE_CAP,
    JOIN_PREFIXES,
    READ_NAMES,
    STAGE_NAMES,
    _NO_DESC,
    _NO_REQ,
    _Walk,
    _EXCHANGE_ID,
    _exchange_ids,
    _big,
    Recorder,
)
