"""Settings of one AQE Lens server: what strangers on a shared host may make it do.

Read once per process from ``$AQE_LENS_HOME/server.toml`` (or the file named by
``AQE_LENS_CONFIG``), then from ``AQE_LENS_*`` environment variables, which win. Every limit is
on by default; ``trusted = true`` lifts the SQL guard for a single trusted user and nothing else.

    # $AQE_LENS_HOME/server.toml
    trusted = false                      # SQL guard on (AQE_LENS_TRUSTED=1 turns it off)
    run_time_limit_s = 600               # a run is cancelled after this (AQE_LENS_RUN_TIME_LIMIT)
    allowed_masters = ["local[*]"]       # master URLs users may pick (AQE_LENS_MASTERS, comma-separated)
    roots = ["/data/spark-events"]       # extra folders "Path on server" may open (AQE_LENS_ROOTS, os.pathsep)
    max_upload_mb = 200                  # one upload (AQE_LENS_MAX_UPLOAD_MB)
    upload_quota_mb = 2048               # all kept uploads; oldest removed first (AQE_LENS_UPLOAD_QUOTA_MB)
    max_decompressed_mb = 4096           # decoded bytes of one source opened in the app
    max_decompress_s = 60                # CPU time to decode one source opened in the app
    allowed_hosts = ["127.0.0.1", "localhost"]  # names the app answers to, in Host and Origin
                                         # (AQE_LENS_ALLOWED_HOSTS, comma-separated); "name" is on
                                         # the served port, "name:port" any other (a proxy's)
    memory_budget_mb = 2048              # every load and the source cache together (AQE_LENS_MEMORY_BUDGET_MB)
    max_concurrent_loads = 2             # sources read at once; others wait (AQE_LENS_MAX_CONCURRENT_LOADS)
    max_executions = 10000               # SQL executions of one source (AQE_LENS_MAX_EXECUTIONS)
    max_plan_nodes = 500000              # plan nodes of one source, every plan version (AQE_LENS_MAX_PLAN_NODES)
    max_task_slots = 32000000            # per-task values of one source, 8 bytes each (AQE_LENS_MAX_TASK_SLOTS)
    max_load_s = 120                     # wall time to open one source, views included (AQE_LENS_MAX_LOAD_S)
    max_listing_s = 900                  # wall and decoding time to list a log past max_executions by query,
                                         # or to open one execution of it (AQE_LENS_MAX_LISTING_S)

The bundled samples and the app's data directory are always roots. The memory budget is
shared by all loads in progress and the sources kept in the cache (sizes estimated from what
the reader counts: executions, plan nodes, task values); a load past any limit stops with a
message naming the setting (docs/eventlog-limits.md, "Server budgets").
"""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Optional

REPO_ROOT = Path(__file__).resolve().parents[1]
SAMPLES_DIR = REPO_ROOT / "sample_logs"
MiB = 1024 * 1024


class SettingsError(ValueError):
    """The server settings file or an ``AQE_LENS_*`` variable holds a value we cannot use."""


def lens_home() -> Path:
    """The app's data directory (presets, shared views, uploads, runs)."""
    return Path(os.environ.get("AQE_LENS_HOME") or Path.home() / ".aqe-lens")


@dataclass(frozen=True)
class ServerSettings:
    trusted: bool = False
    run_time_limit_s: float = 600.0
    allowed_masters: tuple[str, ...] = ("local[*]",)
    roots: tuple[str, ...] = ()
    max_upload_mb: float = 200.0
    upload_quota_mb: float = 2048.0
    max_decompressed_mb: float = 4096.0
    max_decompress_s: float = 60.0
    #: host names the web app answers to (ui.host_guard): every other Host or Origin is refused
    allowed_hosts: tuple[str, ...] = ("127.0.0.1", "localhost")
    memory_budget_mb: float = 2048.0
    max_concurrent_loads: int = 2
    max_executions: int = 10_000
    max_plan_nodes: int = 500_000
    max_task_slots: int = 32_000_000
    max_load_s: float = 120.0
    #: a log past max_executions is read in listing mode (issue 41: flat memory, but as long as the
    #: log is: 10^6 small executions take about 5 min of CPU): its own time limit
    max_listing_s: float = 900.0

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * MiB)

    @property
    def upload_quota_bytes(self) -> int:
        return int(self.upload_quota_mb * MiB)

    @property
    def max_decompressed_bytes(self) -> int:
        return int(self.max_decompressed_mb * MiB)

    @property
    def memory_budget_bytes(self) -> int:
        return int(self.memory_budget_mb * MiB)

    def all_roots(self) -> list[Path]:
        """Folders "Path on server" may open: the samples, the data directory, the configured ones."""
        return [SAMPLES_DIR, lens_home(), *(Path(r).expanduser() for r in self.roots)]


_ENV = {
    "trusted": "AQE_LENS_TRUSTED",
    "run_time_limit_s": "AQE_LENS_RUN_TIME_LIMIT",
    "allowed_masters": "AQE_LENS_MASTERS",
    "roots": "AQE_LENS_ROOTS",
    "max_upload_mb": "AQE_LENS_MAX_UPLOAD_MB",
    "upload_quota_mb": "AQE_LENS_UPLOAD_QUOTA_MB",
    "max_decompressed_mb": "AQE_LENS_MAX_DECOMPRESSED_MB",
    "max_decompress_s": "AQE_LENS_MAX_DECOMPRESS_S",
    "allowed_hosts": "AQE_LENS_ALLOWED_HOSTS",
    "memory_budget_mb": "AQE_LENS_MEMORY_BUDGET_MB",
    "max_concurrent_loads": "AQE_LENS_MAX_CONCURRENT_LOADS",
    "max_executions": "AQE_LENS_MAX_EXECUTIONS",
    "max_plan_nodes": "AQE_LENS_MAX_PLAN_NODES",
    "max_task_slots": "AQE_LENS_MAX_TASK_SLOTS",
    "max_load_s": "AQE_LENS_MAX_LOAD_S",
    "max_listing_s": "AQE_LENS_MAX_LISTING_S",
}


def _coerce(name: str, value: Any, kind: Any) -> Any:
    try:
        if kind is bool or kind == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off", ""):
                return False
            raise ValueError(value)
        if kind in (int, "int"):
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError(value)
            out = int(str(value).strip()) if isinstance(value, str) else int(value)
            if out < 1:
                raise ValueError(value)
            return out
        if kind in (float, "float"):
            real = float(value)
            if not real > 0:
                raise ValueError(value)
            return real
        if isinstance(value, str):
            sep = os.pathsep if name == "roots" else ","
            value = [x.strip() for x in value.split(sep) if x.strip()]
        if not isinstance(value, (list, tuple)) or not all(isinstance(x, str) for x in value):
            raise ValueError(value)
        return tuple(value)
    except (TypeError, ValueError):
        raise SettingsError(f"server setting {name}: {value!r} is not a valid value") from None


def settings_from(mapping: Mapping[str, Any], env: Optional[Mapping[str, str]] = None) -> ServerSettings:
    """Settings from a parsed TOML mapping, then ``AQE_LENS_*`` variables of ``env``."""
    known = {f.name: f.type for f in fields(ServerSettings)}
    unknown = sorted(set(mapping) - set(known))
    if unknown:
        raise SettingsError(f"unknown server setting(s): {', '.join(unknown)} (known: {', '.join(known)})")
    values = {k: _coerce(k, v, known[k]) for k, v in mapping.items()}
    for name, var in _ENV.items():
        if env and env.get(var) is not None:
            values[name] = _coerce(name, env[var], known[name])
    return replace(ServerSettings(), **values)


def settings_path() -> Path:
    return Path(os.environ.get("AQE_LENS_CONFIG") or lens_home() / "server.toml")


@lru_cache(maxsize=1)
def _cached(path: str, mtime: float, env_items: tuple[tuple[str, str], ...]) -> ServerSettings:
    data: dict[str, Any] = {}
    if mtime >= 0:
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise SettingsError(f"cannot read server settings {path}: {exc}") from None
    return settings_from(data, dict(env_items))


def server_settings() -> ServerSettings:
    """The settings in force (re-read when the file or the variables change)."""
    p = settings_path()
    try:
        mtime = p.stat().st_mtime
    except OSError:
        mtime = -1.0
    env = tuple(sorted((v, os.environ[v]) for v in _ENV.values() if v in os.environ))
    return _cached(str(p), mtime, env)
