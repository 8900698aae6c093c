"""``outcome_text`` is the AQE part of ``outcome_line`` (issue 9): the views use it instead of
slicing the CLI's line by column. Checked against today's slice for every execution of every
bundled event log."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from aqe_core.readers.eventlog import load
from aqe_core.views.eventlog_summary import outcome_line, outcome_text

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_logs" / "eventlogs"
FIXTURES = REPO / "tests" / "fixtures" / "eventlogs"


def _old_slice(ex) -> str:
    """How the views cut the AQE part out of the CLI's line by column before issue 9."""
    line = outcome_line(ex)
    head = len(f"#{ex.id:<4} {ex.status:<9} ") + 40 + 2
    return line[head:].strip() if len(line) > head else "no AQE"


LOGS = [SAMPLES / entry["files"][0] for _, entry in sorted(json.loads((SAMPLES / "MANIFEST.json").read_text()).items())]
LOGS += [FIXTURES / name for name in sorted(json.loads((FIXTURES / "MANIFEST.json").read_text()))]


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_outcome_text_is_the_slice_of_outcome_line(path):
    log = load(str(path))
    assert log.executions
    for ex in log.executions.values():
        text = outcome_text(ex)
        assert text == _old_slice(ex)
        line = outcome_line(ex)
        assert line.endswith("  " + text)
        assert len(line) == len(f"#{ex.id:<4} {ex.status:<9} ") + 40 + 2 + len(text)
