"""The executors' Python, shipped with the scan (``scan --ship-python``): Spark's own way to give a
cluster the packages its nodes lack, an archive in ``spark.archives`` that every executor unpacks
into its working directory, and ``PYSPARK_PYTHON`` naming the interpreter inside it (Spark's
"Python Package Management" page, the venv-pack recipe).

The archive is a virtual environment of this interpreter's version holding only what the reader
imports on an executor (:data:`aqe_core.fleet.probe.EXECUTOR_MODULES`' distributions, copied from
this environment); ``aqe_core`` itself goes with ``addPyFile`` as before. As with venv-pack, the
interpreter is not in the archive: the venv's ``bin/python`` links to this Python's base
interpreter, which must exist at the same path on every node (same OS and architecture for the
codecs' compiled parts). Without it the scan's first job (the probe) names the cause.
"""
from __future__ import annotations

import hashlib
import importlib.metadata as md
import os
import shutil
import sys
import tarfile
import tempfile
import venv
from pathlib import Path

from aqe_core import config as K
from aqe_core.fleet.probe import EXECUTOR_MODULES

__all__ = ["ENV_DIR", "pack_executor_env", "ship_settings"]

#: the folder an executor unpacks the archive into (``spark.archives``' ``#name``)
ENV_DIR = "aqe_lens_env"


def _distributions() -> list[md.Distribution]:
    """The installed distributions that provide the executor's third-party modules."""
    tops = {m.split(".")[0] for m in EXECUTOR_MODULES if not m.startswith("aqe_core")}
    provided = md.packages_distributions()  # (reads every installed distribution's metadata: once)
    names = {d for t in tops for d in provided.get(t, [])}
    missing = tops - set(provided)
    if missing:
        raise RuntimeError(f"cannot ship the executors' Python: this one lacks {', '.join(sorted(missing))}"
                           " (install requirements.txt)")
    return [md.distribution(n) for n in sorted(names)]


def _site_packages(env: Path) -> Path:
    if os.name == "nt":  # pragma: no cover - Spark clusters run POSIX nodes
        return env / "Lib" / "site-packages"
    return env / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


def pack_executor_env(where: Path) -> Path:
    """``where/aqe-lens-executor-env-<digest>.tar.gz``, built once per Python and package versions."""
    dists = _distributions()
    key = "\n".join([sys.version, getattr(sys, "_base_executable", sys.executable)]
                    + [f"{d.metadata['Name']}=={d.version}" for d in dists])
    out = where / f"aqe-lens-executor-env-{hashlib.sha256(key.encode()).hexdigest()[:16]}.tar.gz"
    if out.exists():
        return out
    where.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="aqe-lens-env-", dir=where) as tmp:
        env = Path(tmp) / "env"
        venv.EnvBuilder(with_pip=False, symlinks=True, clear=True).create(env)
        site = _site_packages(env)
        for d in dists:
            for f in d.files or []:
                src = Path(str(d.locate_file(f)))
                if ".." in f.parts or "__pycache__" in f.parts or not src.is_file():
                    continue  # scripts outside site-packages, byte code: the executor compiles its own
                dst = site / f
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dst)
        part = Path(tmp) / out.name
        with tarfile.open(part, "w:gz") as tar:
            for p in sorted(env.iterdir()):
                tar.add(p, arcname=p.name)
        os.replace(part, out)  # whole or not at all: a concurrent scan reuses a finished archive
    return out


def ship_settings(archive: Path, spark_conf: dict[str, str]) -> tuple[dict[str, str], str]:
    """(the Spark settings with the archive added to ``spark.archives``, the executors' ``PYSPARK_PYTHON``)."""
    entry = f"{archive}#{ENV_DIR}"
    before = spark_conf.get(K.ARCHIVES, "").strip()
    conf = dict(spark_conf, **{K.ARCHIVES: f"{before},{entry}" if before else entry})
    return conf, f"./{ENV_DIR}/bin/python"
