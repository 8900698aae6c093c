"""Compatibility path (issue 9): the capture dataclasses moved to :mod:`aqe_core.model.capture`
(field checks in :mod:`aqe_core.model._checks`), file reading and writing to
:mod:`aqe_core.readers.capture_file`."""
# compat shim (issue 9)
from aqe_core.model._checks import (  # noqa: F401
    _I64,
    _INFO_TYPES,
    _SPEC_FIELDS,
    MAX_COUNT,
    CaptureFormatError,
    _bad,
    _bool,
    _count,
    _dict,
    _float,
    _info,
    _int,
    _ints,
    _list,
    _metric,
    _plan_dict,
    _size,
    _spec,
    _str,
    _str_dict,
)
from aqe_core.model.capture import (  # noqa: F401
    FORMAT,
    FORMAT_VERSION,
    Capture,
    CapturedPlan,
    MapSizes,
    PlanUpdate,
    QueryCapture,
    ReadCapture,
    ShuffleCapture,
    SparkStageTiming,
    StageCapture,
    _check_specs,
)
from aqe_core.readers.capture_file import (  # noqa: F401
    DEFAULT_MAX_CAPTURE_BYTES,
    MiB,
    PathLike,
    _parse,
    _read_limited,
    dumps,
    load_capture,
    loads,
    save_capture,
)
