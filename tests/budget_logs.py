"""Hostile event logs for the server budget tests (issue 24), written after a real log's header:
many tiny SQL executions, stages that declare inflated task counts, a log with no SQL execution
that is too big to decode."""
from __future__ import annotations

import gzip
from pathlib import Path

from aqe_core import config
from aqe_core.server_settings import SAMPLES_DIR

SQL = b"org.apache.spark.sql.execution.ui."
#: LogStart, ExecutorAdded, BlockManagerAdded, EnvironmentUpdate, ApplicationStart of a real 3.0.1 log
HEADER = b"\n".join((SAMPLES_DIR / "eventlogs" / "local-1795309249168").read_bytes().split(b"\n")[:5]) + b"\n"


def _start(eid: int) -> bytes:
    return (b'{"Event":"%sSparkListenerSQLExecutionStart","executionId":%d,"description":"q","details":"",'
            b'"physicalPlanDescription":"","sparkPlanInfo":{"nodeName":"LocalTableScan","simpleString":"LocalTableScan",'
            b'"children":[],"metadata":{},"metrics":[]},"time":%d}\n') % (SQL, eid, eid)


def _end(eid: int) -> bytes:
    return b'{"Event":"%sSparkListenerSQLExecutionEnd","executionId":%d,"time":%d}\n' % (SQL, eid, eid + 1)


def many_executions(path: Path, n: int) -> Path:
    """``n`` tiny SQL executions (a start and an end each), gzip: 10**6 of them are ~14 MB."""
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(HEADER)
        for lo in range(0, n, 10_000):
            f.write(b"".join(_start(i) + _end(i) for i in range(lo, min(n, lo + 10_000))))
    return path


def inflated_tasks(path: Path, tasks: int, stages: int = 1, tag: int = 0, index: int | None = None) -> Path:
    """One SQL execution whose job's ``stages`` stages each declare ``tasks`` tasks, and one
    finished task per stage, at ``index`` (default: the last, ``tasks - 1``, which makes the
    reader size its per-task arrays to the whole count; at 0 they hold a few slots): a few KB of
    gzip. ``tag`` makes files of the same shape differ."""
    at = tasks - 1 if index is None else index
    prop = config.EXECUTION_ID_KEY.encode()
    infos = b",".join(b'{"Stage ID":%d,"Stage Attempt ID":0,"Stage Name":"s","Number of Tasks":%d}' % (s, tasks)
                      for s in range(stages))
    lines = [HEADER, _start(0),
             b'{"Event":"SparkListenerJobStart","Job ID":0,"Submission Time":1,"Stage Infos":[%s],"Stage IDs":[%s],'
             b'"Properties":{"%s":"0","tag":"%d"}}\n' % (infos, b",".join(b"%d" % s for s in range(stages)), prop, tag)]
    for s in range(stages):
        lines.append(b'{"Event":"SparkListenerStageSubmitted","Stage Info":{"Stage ID":%d,"Stage Attempt ID":0,'
                     b'"Stage Name":"s","Number of Tasks":%d,"Submission Time":1}}\n' % (s, tasks))
        lines.append(b'{"Event":"SparkListenerTaskEnd","Stage ID":%d,"Stage Attempt ID":0,"Task Info":{"Task ID":%d,'
                     b'"Index":%d,"Launch Time":1,"Finish Time":2,"Failed":false,"Killed":false,"Accumulables":[]}}\n'
                     % (s, s, at))
    lines.append(_end(0))
    path.write_bytes(gzip.compress(b"".join(lines)))
    return path


def blank_log(path: Path, mb: int) -> Path:
    """``mb`` MiB of spaces and no newline: not one event, so the load fails ("empty log") only
    after reading all of it."""
    path.write_bytes(b" " * (mb << 20))
    return path
