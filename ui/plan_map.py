"""The plan map in the app: :mod:`aqe_core.figures.plan_map`'s drawing script as a Streamlit
component (``st.components.v2``, no iframe), fed the map's data. A click on a node opens its
details in the page without a re-run; only "open this stage" comes back to Python."""
from __future__ import annotations

from typing import Any, Callable, Optional

import streamlit as st

from aqe_core.figures.plan_figure import STAGE_KEY
from aqe_core.figures.plan_map import plan_map_script

_NAME = "aqe_lens_plan_map"
_BRIDGE = """
export default function(component) {
  const { data, parentElement, setTriggerValue } = component;
  let root = parentElement.querySelector('.pm-root');
  if (!root) { root = document.createElement('div'); root.className = 'pm-root'; parentElement.appendChild(root); }
  renderPlanMap(root, data, { onExpand: (key) => setTriggerValue('expand', key) });
  return () => { if (root._pmCleanup) root._pmCleanup(); };
}
"""


@st.cache_resource
def _component() -> Any:
    """Registered once per process: the drawing script, then the bridge that calls it."""
    return st.components.v2.component(_NAME, js=plan_map_script() + "\n" + _BRIDGE)


def plan_map(data: dict[str, Any], key: str, on_expand: Optional[Callable[[str], None]] = None) -> None:
    """Draw one plan map; ``on_expand(stage id)`` when the user opens a stage's operators."""
    result = _component()(data=data, key=key, on_expand_change=lambda: None)
    clicked = getattr(result, "expand", None)
    if clicked and on_expand is not None:
        key = str(clicked)
        on_expand(key[len(STAGE_KEY):] if key.startswith(STAGE_KEY) else key)
