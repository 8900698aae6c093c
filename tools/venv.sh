# Sourced by tools/app.sh and tools/test.sh: make (once) and use the project's virtual
# environment, .venv/, and install the project into it, editable (pip install -e: the checkout's
# code is what runs), with its pinned dependencies from requirements.txt (and the "dev" extra,
# requirements-dev.txt, for the tests). A stock Debian or Ubuntu Python refuses to install into
# itself (PEP 668, "externally-managed-environment"), and a venv is how most users run Python
# projects anyway. Debian ships the venv module's pip bootstrap apart
# (python3-venv): it is installed when missing, as the test script installs Chromium.
# Usage: . tools/venv.sh .   or   . tools/venv.sh ".[dev]"   (then "$PY" is the venv's interpreter,
# and the venv's bin/ has the aqe-lens command)
VENV="${AQE_LENS_VENV:-.venv}"
BASE_PY="${PYTHON:-python3}"
if [ ! -x "$VENV/bin/python" ]; then
  if ! "$BASE_PY" -m venv "$VENV" >/dev/null 2>&1; then
    rm -rf "$VENV"
    if command -v apt-get >/dev/null 2>&1; then
      SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
      PYV="$("$BASE_PY" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
      echo "installing Debian's python3-venv (the venv module's pip bootstrap)" >&2
      $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        python3-venv "python${PYV}-venv" >/dev/null 2>&1 \
        || $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    fi
    "$BASE_PY" -m venv "$VENV"
  fi
fi
PY="$VENV/bin/python"
"$PY" -m pip install -q --disable-pip-version-check -e "$1"
