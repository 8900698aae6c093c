#!/usr/bin/env bash
# Build the AQE Lens listener jar from listener/src (reproducibly: fixed timestamps, sorted
# entries), against the installed PySpark's jars, for Java 8+ and Spark 3.0.1 - 4.3 (Scala 2.12
# and 2.13: every Scala-typed call is reflective). Writes aqe_core/listener/aqe-lens-listener.jar.
#   tools/build_listener.sh [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
# the Python whose PySpark jars to compile against: $PYTHON, else the project's venv, else python3
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
OUT="${1:-aqe_core/listener/aqe-lens-listener.jar}"
JARS="$("$PY" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
CLASSES="$(mktemp -d)"
trap 'rm -rf "$CLASSES"' EXIT
javac --release 8 -nowarn -encoding UTF-8 -cp "$JARS/*" -d "$CLASSES" listener/src/main/java/io/aqelens/listener/*.java
"$PY" - "$CLASSES" "$OUT" <<'PYEOF'
import os, sys, zipfile
classes, out = sys.argv[1], sys.argv[2]
entries = []
for root, _dirs, files in os.walk(classes):
    for f in files:
        entries.append(os.path.relpath(os.path.join(root, f), classes).replace(os.sep, "/"))
manifest = "Manifest-Version: 1.0\r\nCreated-By: AQE Lens tools/build_listener.sh\r\n\r\n"
os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    def add(name, data):
        info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        z.writestr(info, data)
    add("META-INF/MANIFEST.MF", manifest)
    for name in sorted(entries):
        with open(os.path.join(classes, name), "rb") as fh:
            add(name, fh.read())
print(out)
PYEOF
