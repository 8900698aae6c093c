"""A rolling event-log folder's fingerprint (asked on every page switch) lists the folder again
only when a part is added or removed, and still sees the part Spark appends to (issue 37: a
folder of 90,001 parts was listed on every click, 1.2 s a page switch)."""
from __future__ import annotations

import os
import time

from aqe_core import opening
from aqe_core.source_cache import content_fingerprint


def test_a_rolling_folder_is_listed_once_and_its_growth_still_seen(tmp_path, monkeypatch):
    for i in range(1, 2001):
        (tmp_path / f"events_{i}_app-1").write_bytes(b"{}\n")
    walks = []
    real_walk = os.walk
    monkeypatch.setattr(opening.os, "walk", lambda p: walks.append(p) or real_walk(p))
    first = content_fingerprint(str(tmp_path))
    assert content_fingerprint(str(tmp_path)) == first and len(walks) == 1
    time.sleep(0.02)
    with open(tmp_path / "events_2000_app-1", "ab") as f:  # Spark appends to the newest part
        f.write(b"{}\n")
    grown = content_fingerprint(str(tmp_path))
    assert grown != first and len(walks) == 1
    (tmp_path / "events_2001_app-1").write_bytes(b"{}\n")  # a new part: the folder's mtime moves
    assert content_fingerprint(str(tmp_path)) not in (first, grown) and len(walks) == 2


def test_a_folder_with_subfolders_is_listed_every_time(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "part").write_bytes(b"{}\n")
    walks = []
    real_walk = os.walk
    monkeypatch.setattr(opening.os, "walk", lambda p: walks.append(p) or real_walk(p))
    first = content_fingerprint(str(tmp_path))
    time.sleep(0.02)
    (tmp_path / "sub" / "part").write_bytes(b"{}\n{}\n")  # (the top folder's mtime does not move)
    assert content_fingerprint(str(tmp_path)) != first and len(walks) == 2
