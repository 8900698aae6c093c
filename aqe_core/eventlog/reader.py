"""Compatibility path (issue 9): the reader was split into :mod:`aqe_core.readers.eventlog`'s
``lines`` (line splitting, task-end parsing), ``live_state`` and ``builder`` (events -> state),
``executions`` (end of log) and ``loader`` (the entry point)."""
# compat shim (issue 9)
from aqe_core.model.eventlog import NOT_IN_LOG, EventLog, ShuffleRead, SQLExecution, StageInfo  # noqa: F401
from aqe_core.model.plan_walk import exchange_below as _exchange_below  # noqa: F401
from aqe_core.readers.eventlog import codecs, metrics as M  # noqa: F401
from aqe_core.readers.eventlog.builder import (  # noqa: F401
    _FIELD_ERRORS,
    _MAX_SAMPLES,
    SQL_EVENT_PREFIX as SQL_PREFIX,
    _Builder,
)
from aqe_core.readers.eventlog.errors import (  # noqa: F401
    DEFAULT_LIMITS,
    DecodeError,
    EventLogError,
    LimitExceeded,
    Limits,
)
from aqe_core.readers.eventlog.executions import (  # noqa: F401
    _SKEW_DESC,
    _effective_conf,
    _opt_str,
    _read_of,
    _set_status,
    _shuffle_reads,
)
from aqe_core.readers.eventlog.lines import (  # noqa: F401
    _ACC,
    _ACC_SQL,
    _COMPLETION,
    _I64_MAX,
    _I64_MIN,
    _SRM,
    _STAGE_INFO,
    _SUBMISSION,
    _TE_FINISH,
    _TE_HEAD,
    _TE_INFO,
    _TE_SUCCESS,
    _as_int,
    _BadNumber,
    _Lines,
    parse_task_end_fast,
    parse_task_end_json,
)
from aqe_core.readers.eventlog.live_state import (  # noqa: F401
    _READ_METRICS,
    _LiveExec,
    _ReadStore,
    _SlotBudget,
    _StageMetrics,
)
from aqe_core.readers.eventlog.loader import (  # noqa: F401
    _CONTAINER_ERRORS,
    ProgressFn,
    _load_source,
    _open_part_stream,
    _Prepend,
    load,
    not_in_log,
)
from aqe_core.readers.eventlog.planinfo import SHUFFLE_READ_NAMES, build_plan, graph_nodes, plan_metrics  # noqa: F401
from aqe_core.readers.eventlog.sources import IterStream, LogSource, Part, open_source  # noqa: F401
