"""What a command loads before it reads its input: ``inspect`` on a million-execution log is
compared with a ``json.loads`` pass over the same lines (issue 41), and numpy alone was 0.13 s of
its start. No rule the event-log commands run needs it at import."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_event_log_commands_start_without_numpy():
    code = ("import sys, aqe_core.cli, aqe_core.readers.eventlog.loader, aqe_core.views.eventlog_summary,"
            " aqe_core.views.execution_summary, aqe_core.views.encoded_executions, aqe_core.views.query_listing;"
            " print('numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "False"

