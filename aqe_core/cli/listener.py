"""``listener``: the settings that add the AQE Lens listener to a Spark job."""
from __future__ import annotations

import argparse
import sys


def add_listener_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--spark-conf", action="store_true",
                   help="print key=value lines for a SparkSession builder or spark-submit --conf (the default)")
    p.add_argument("--submit", action="store_true", help="print them as spark-submit arguments")


def cmd_listener(args: argparse.Namespace) -> int:
    from aqe_core.listener import JAR_PATH, spark_conf

    if not JAR_PATH.exists():
        print(f"listener: the jar is missing ({JAR_PATH}); rebuild it with tools/build_listener.sh", file=sys.stderr)
        return 2
    conf = spark_conf()
    if args.submit:
        sys.stdout.write(" ".join(f"--conf {k}={v}" for k, v in conf.items()) + "\n")
    else:
        sys.stdout.write("".join(f"{k}={v}\n" for k, v in conf.items()))
    return 0
