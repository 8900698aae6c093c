"""Which of a scan's logs the app cannot open from a Fleet row (outside its roots, or not on its
file system), said before any click: on the Fleet page when a scan opens, by ``scan`` before it
starts. Checked as opening one would be: symlinks resolved against the roots."""
from __future__ import annotations


from aqe_core.cli.scan import reach_warnings
from aqe_core.fleet.result import unopenable


def test_logs_outside_the_roots_and_elsewhere_are_named(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    for d in (root, outside):
        d.mkdir()
    (root / "a.log").write_text("{}")
    (outside / "b.log").write_text("{}")
    (root / "link.log").symlink_to(outside / "b.log")  # inside by name, outside by what it opens
    files = [str(root / "a.log"), str(outside / "b.log"), str(root / "link.log"), "hdfs://nn/logs/c",
             f"file:{root / 'a.log'}", None, ""]
    got = unopenable(files, roots=[str(root)])
    assert got.outside_roots == [str(outside / "b.log"), str(root / "link.log")]
    assert got.elsewhere == ["hdfs://nn/logs/c"]
    text = got.sentences(shown=1)
    assert text[0].startswith("2 logs are outside this server's roots (") and "and 1 more" in text[0]
    assert text[1] == "1 log is not on this server's file system (hdfs://nn/logs/c): open it where it is"
    assert not unopenable([str(root / "a.log")], roots=[str(root)])


def test_scan_says_what_the_app_will_not_open_before_it_starts(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("AQE_LENS_HOME", str(home))
    monkeypatch.setenv("AQE_LENS_ROOTS", str(tmp_path / "root"))
    (tmp_path / "root").mkdir()
    (tmp_path / "stray").mkdir()
    (tmp_path / "stray" / "app-1").write_text("{}")
    (tmp_path / "root" / "app-2").write_text("{}")
    said = reach_warnings([str(tmp_path / "stray" / "*"), str(tmp_path / "root")], str(tmp_path / "root" / "scan"))
    assert said == [f"scan: 1 log is outside this server's roots ({tmp_path / 'stray' / 'app-1'}): add its folder to"
                    " roots in the server settings (AQE_LENS_ROOTS) to open it here"]
    said = reach_warnings([str(tmp_path / "root")], str(tmp_path / "out"))
    assert len(said) == 1 and said[0].startswith(f"scan: the output folder {tmp_path / 'out'} is outside")
    assert reach_warnings([str(tmp_path / "root")], str(home / "scans" / "x")) == []  # the data directory is a root
