#!/usr/bin/env bash
# Install the app into .venv/ (made on first use) and start it on the embedded default: local
# Spark, the bundled samples. Arguments go to `streamlit run` (e.g. --server.port 8600).
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/venv.sh .
exec "$PY" -m streamlit run app.py "$@"
