"""Ctrl-C on the command line: one line and exit 130 at any moment, also while Spark starts
(PySpark's driver JVM ignores SIGINT and would print Java's stack trace after we exit; Py4J logs
the interrupted call's traceback; PySpark's own handler raises again on a second Ctrl-C)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            out += [int(x) for x in task.read_text().split()]
        except (OSError, ValueError):
            pass
    return out


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc")
@pytest.mark.parametrize("after_s", [1.0, 4.0])
def test_ctrl_c_while_spark_starts_is_one_line(tmp_path, after_s):
    env = dict(os.environ, PYTHONPATH=str(ROOT), AQE_LENS_HOME=str(tmp_path / "home"))
    env.pop("AQE_LENS_MASTER", None)
    proc = subprocess.Popen([sys.executable, "-m", "aqe_core", "run", "--sql", "SELECT 1", "-o", str(tmp_path / "q.json")],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(after_s)
    kids = _children(proc.pid)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.3)
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)  # a second Ctrl-C, as an impatient user presses it
    out, err = proc.communicate(timeout=120)
    time.sleep(1)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "\tat " not in err, err
    assert err.rstrip().endswith("interrupted"), err
    for pid in kids + _children(proc.pid):
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2], pid


@pytest.mark.parametrize("with_root_handler", [False, True])
def test_py4j_tracebacks_of_an_interrupt_are_not_printed_from_child_loggers(capsys, with_root_handler):
    """Py4J logs on `py4j.clientserver`: a record propagated from a child logger passes the root
    logger's handlers (or Python's last-resort handler), never the root logger's own filters."""
    import logging

    from aqe_core.cli import _quiet_interrupt_logs

    root = logging.getLogger()
    kept = root.handlers[:]  # pytest's own capture handlers: without them Python's last resort prints
    root.handlers[:] = [logging.StreamHandler(sys.stderr)] if with_root_handler else []
    try:
        _quiet_interrupt_logs()
        child = logging.getLogger("aqe_lens_test_py4j.clientserver")  # no NullHandler of Py4J's on the way
        try:
            raise BrokenPipeError(32, "Broken pipe")
        except OSError:
            record = child.makeRecord(child.name, logging.ERROR, "/site-packages/py4j/clientserver.py", 512,
                                      "Exception occurred while shutting down connection", (), sys.exc_info())
        child.handle(record)
        child.error("a record of ours still prints")
    finally:
        root.handlers[:] = kept
    err = capsys.readouterr().err
    assert "shutting down connection" not in err and "Traceback" not in err, err
    assert "a record of ours still prints" in err
