#!/usr/bin/env bash
# Install everything the test suite needs on a fresh machine (into .venv/), then lint and run the whole suite.
# Used by the README's test command and by CI (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
# Everything runs from the project's own .venv/ (made on first use), as users run it.
. tools/venv.sh ".[dev]"
# Browser tests drive Debian's Chromium (never a downloaded browser build).
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  ($SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "warning: could not install chromium; browser tests will be skipped" >&2
fi
# Lint first (pyproject.toml [tool.ruff]): unused names, blind excepts without a reason, stale noqa.
"$PY" -m ruff check .
# Types (pyproject.toml [tool.mypy], aqe_core): blocking, a type error fails the run (issue 38,
# requirement 6: aqe_core has none).
"$PY" -m mypy
mkdir -p artifacts
exec "$PY" -m pytest "$@"
