"""The Compare page's pieces: the shared x range of its histograms and the form that saves a
preset of the user's own."""
from __future__ import annotations

from typing import Optional

import streamlit as st

from aqe_core.figures.histograms import side_by_side
from aqe_core.advise.whatif import PresetOutcome
from aqe_core.views.compare import preset_shuffle_views
from aqe_core.views.query import QueryView, ShuffleView
from aqe_core.config import ADVISORY_PARTITION_SIZE_IN_BYTES
from aqe_core.plain_text import md_text
from aqe_core.user_presets import save_user_preset


def shared_x_range(outcomes: list) -> Optional[tuple[int, int]]:
    """One x range for every preset's histograms, so their bars line up."""
    all_sizes = [x for o in outcomes for s in o.shuffles for x in s.sizes_after]
    return (max(min(all_sizes), 1), max(all_sizes)) if all_sizes else None


def preset_charts(view: QueryView, outcomes: list[PresetOutcome], most: int = 4) -> list[list]:
    """Per preset, the charts of its first ``most`` reads: each read drawn with one chart kind and
    one size axis across the presets (a preset's bars are our rules' prediction and say so)."""
    per_preset = [preset_shuffle_views(view, o)[:most] for o in outcomes]
    out: list[list] = [[] for _ in outcomes]
    for key in dict.fromkeys(k for views in per_preset for k in (s.key for s in views)):
        row = [(i, next(s for s in views if s.key == key)) for i, views in enumerate(per_preset)
               if any(s.key == key for s in views)]
        figs = side_by_side([sv for _i, sv in row], [_title(sv) for _i, sv in row], height=340, compact=True)
        for (i, _sv), fig in zip(row, figs):
            out[i].append(fig)
    return out


def _title(sv: ShuffleView) -> str:
    n = len(sv.sizes_after or [])
    return (f"{sv.label.split(':')[0][:40]}: {n} partition{'s' if n != 1 else ''}, "
            + ("predicted" if sv.predicted else "as run"))  # the hover: "predicted by our rules"


def parse_settings(text: str) -> dict[str, str]:
    """``key=value`` lines (blank lines skipped, both sides stripped); ValueError naming the first
    line without ``=`` or without a key, in words a person can act on."""
    settings: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        key, eq, value = line.partition("=")
        if not eq or not key.strip():
            shown = line.strip() if len(line.strip()) <= 60 else line.strip()[:57] + "..."
            raise ValueError(f"line {number} ({shown!r}) is not key=value: write one setting per line,"
                             f" e.g. {ADVISORY_PARTITION_SIZE_IN_BYTES}=128m")
        settings[key.strip()] = value.strip()
    return settings


def save_preset_form(view: QueryView) -> None:
    """A form naming a preset and its settings, saved for the query's Spark release."""
    with st.form("save_preset"):
        name = st.text_input("Name")
        text = st.text_area("Settings, one key=value per line", placeholder=f"{ADVISORY_PARTITION_SIZE_IN_BYTES}=128m")
        if st.form_submit_button("Save"):
            try:
                save_user_preset(name.strip(), parse_settings(text), spark_version=str(view.spark_version))
                st.success(f"Saved preset {md_text(name)}")
            except ValueError as exc:
                st.error(md_text(exc))
            except OSError as exc:  # the data directory is not writable, disk full...
                st.error(f"Could not save the preset ({type(exc).__name__}); nothing was changed")
