"""Compatibility path (issue 9): the Streamlit glue moved to the :mod:`ui` package
(:mod:`ui.frame`, :mod:`ui.plans`, :mod:`ui.run`, :mod:`ui.rerun`, keys in :mod:`ui.state`)."""
# compat shim (issue 9)
from ui.frame import (  # noqa: F401
    _apply_report_link, _load_cached, _mtime, _on_sample_pick, _query_label, approx_note, current,
    ensure_navigation, load_with_progress, pick_query, sidebar_source,
)
from ui.plans import _selected_path, plan_figures_for, plan_page  # noqa: F401
from ui.rerun import _actual_preset, _rerun_progress, rerun_for_real  # noqa: F401
from ui.run import _past_runs, _run_status, run_manager, run_page  # noqa: F401
from ui.state import set_source as _set_source  # noqa: F401
