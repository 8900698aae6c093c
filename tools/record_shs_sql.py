#!/usr/bin/env python3
"""Ask a release's own History Server what it shows for every SQL execution of some event logs,
and keep the answer as a test oracle (issue 25): the History Server runs from the jars of the
release that wrote the logs, so the display strings are that release's, not ours.

  python tools/record_shs_sql.py LOG_DIR ~/.cache/aqe-lens/spark-envs/4.2.1 OUT.json

OUT.json: ``{app_id: [ExecutionData, ...]}`` as ``/api/v1/applications/{id}/sql`` returns it
(``details=true``, no plan text), plus ``{app_id}/stages``' attempts (stage id, attempt, status,
task count) under ``"stages"``.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

def main(log_dir: Path, env: Path, out: Path) -> None:
    from aqe_core.live.history_server import HistoryServer

    jars = next(env.glob("lib/python3*/site-packages/pyspark/jars"))
    logs = [p for p in log_dir.iterdir() if not p.name.endswith(".txt")]
    doc: dict = {"release_jars": jars.parent.parent.name + " " + next(jars.glob("spark-core_*.jar")).name, "apps": {}}
    with HistoryServer(log_dir, jars=jars) as hs:
        apps = hs.wait_for_apps(len(logs), timeout=240)
        for app in sorted(apps, key=lambda a: a["id"]):
            stages = hs.get(f"/applications/{app['id']}/stages?details=false")
            doc["apps"][app["id"]] = {
                "sql": hs.sql(app["id"]),
                "stages": sorted(({"stageId": s["stageId"], "attemptId": s["attemptId"], "status": s["status"],
                                   "numTasks": s["numTasks"], "numCompleteTasks": s["numCompleteTasks"]}
                                  for s in stages), key=lambda s: (s["stageId"], s["attemptId"])),
            }
    out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(out)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]).expanduser(), Path(sys.argv[3]))
