"""A server's home and roots for one test: the folders made and the settings pointing at them."""
from __future__ import annotations

from pathlib import Path
from typing import Any


def server_root(tmp_path: Path, monkeypatch: Any, *, no_config: bool = False, **env: str) -> Path:
    """``tmp_path/home`` as ``AQE_LENS_HOME`` and ``tmp_path/root`` as the one root (returned);
    ``no_config``: a server.toml that does not exist; ``env``: more ``AQE_LENS_*`` settings."""
    home, root = tmp_path / "home", tmp_path / "root"
    home.mkdir()
    root.mkdir()
    monkeypatch.setenv("AQE_LENS_HOME", str(home))
    if no_config:
        monkeypatch.setenv("AQE_LENS_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("AQE_LENS_ROOTS", str(root))
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return root
