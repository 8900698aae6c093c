"""Compatibility path (issue 9): captures as views moved to :mod:`aqe_core.views.from_capture`,
reading a capture file to :func:`aqe_core.sources.views_from_capture_file`, the exact preset
simulator to :func:`aqe_core.engine.whatif.what_if`."""
# compat shim (issue 9)
from aqe_core.engine.whatif import one_query as _one_query, spec_sizes as _spec_sizes
from aqe_core.sources import LoadedSource, views_from_capture_file
from aqe_core.views.from_capture import (
    _join_context, _pre_split_sizes, _shuffle_view, capture_label, view_from_query, views_from_capture,
)

__all__ = ["LoadedSource", "capture_label", "view_from_query", "views_from_capture", "views_from_capture_file"]
_KEEP = (_one_query, _spec_sizes, _join_context, _pre_split_sizes, _shuffle_view)
