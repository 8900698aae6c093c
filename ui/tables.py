"""Tables as Streamlit draws them: a column that mixes counts and words ("2", "not in the log")
is shown as text (Arrow refuses a mixed column; Streamlit then logs a traceback per table)."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd


def text_table(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """``rows`` as a frame, each column of mixed types turned to text (numbers keep their form)."""
    df = pd.DataFrame(list(rows))
    for col in df.columns:
        kinds = {type(v) for v in df[col] if v is not None}
        if len(kinds) > 1:
            df[col] = df[col].map(lambda v: "" if v is None else str(v))
    return df
