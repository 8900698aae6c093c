"""The Spark release an event log ran on, from the log's own evidence only, never the installed
PySpark: SparkListenerLogStart's "Spark Version", Databricks' ``DBCEventLoggingListenerMetadata``
event, Databricks' runtime tag (``spark.databricks.clusterUsageTags.sparkVersion``) through
Databricks' table of runtimes. Vendor builds keep the Apache release they start with
("3.5.0-amzn-1": Amazon EMR). Where the log says nothing the release is unknown and said so;
the rules then replay as the nearest Apache release AQE Lens models, and the label names it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Optional

from aqe_core import config
from aqe_core.versions import NEWEST, OLDEST, SparkVersion, UnsupportedSparkVersion, as_version

__all__ = ["DATABRICKS_RUNTIMES", "LogRelease", "release_from", "release_of"]

#: Databricks Runtime (major.minor) -> the Apache Spark release it is built on, as Databricks'
#: release notes list them ("Databricks Runtime release notes versions and compatibility",
#: https://docs.databricks.com/release-notes/runtime/ : the LTS and supported tables; 17.0-17.2
#: and 18.0 from the same page's Azure China copy, https://docs.azure.cn/databricks/runtime/).
DATABRICKS_RUNTIMES: dict[str, str] = {
    "9.1": "3.1.2", "10.4": "3.2.1", "11.3": "3.3.0", "12.2": "3.3.2", "13.3": "3.4.1", "14.3": "3.5.0",
    "15.4": "3.5.0", "16.4": "3.5.2", "17.0": "4.0.0", "17.1": "4.0.0", "17.2": "4.0.0", "17.3": "4.0.0",
    "18.0": "4.1.0",
}

#: "13.3.x-photon-scala2.12", "14.3.x-scala2.12", "15.4.x-gpu-ml-scala2.12" (the tag's form in
#: Databricks' cluster API, ``spark_version``, and in its event logs' Spark properties)
_DBR_TAG = re.compile(r"^\s*(\d{1,3})\.(\d{1,3})\.x(?:-([a-z0-9-]*?))?(?:-scala\d[\d.]*)?\s*$")
_APACHE = re.compile(r"^\s*(\d{1,3})\.(\d{1,3})\.(\d{1,3})(.*)$", re.S)


@dataclass(frozen=True)
class LogRelease:
    """``apache``: the Apache Spark release the log names (None: unknown); ``runtime``: the
    vendor's name for what ran ("Databricks Runtime 13.3 (photon)"); ``source``: how it is known."""

    apache: Optional[str]
    runtime: Optional[str]
    source: str

    @property
    def known(self) -> bool:
        return self.apache is not None

    @property
    def replayed_as(self) -> SparkVersion:
        """The release whose rules replay the log: its own, else the nearest modelled one."""
        if self.apache is None:
            return as_version(NEWEST)
        try:
            v = as_version(self.apache)
        except UnsupportedSparkVersion:
            return as_version(OLDEST)
        return min(v, as_version(NEWEST))

    @property
    def short(self) -> str:
        """The release in a few words ("3.4.1", "unknown")."""
        return self.apache or "unknown"

    @property
    def label(self) -> str:
        """What every header says: the release, the runtime, and which rules replay it."""
        r = self.replayed_as
        if self.apache is None:
            return (f"release unknown{f' ({self.runtime})' if self.runtime else ''}: rules replayed as {r},"
                    " the newest modelled")
        exact = _same(self.apache, r)
        if exact and not self.runtime:
            return f"Spark {self.apache}"
        parts = [self.runtime] if self.runtime else []
        if exact:
            parts.append(f"replayed as Apache Spark {r} rules")
        else:
            parts.append(f"replayed as Apache Spark {r} rules, the nearest modelled")
        return f"Spark {self.apache} ({'; '.join(parts)})"

    def to_dict(self) -> dict[str, Any]:
        return {"apache": self.apache, "runtime": self.runtime, "source": self.source,
                "replayed_as": str(self.replayed_as), "label": self.label}


def _same(text: str, v: SparkVersion) -> bool:
    try:
        return as_version(text) == v
    except UnsupportedSparkVersion:
        return False


def _apache(text: Optional[str]) -> tuple[Optional[str], Optional[str]]:
    """(the Apache release a version string starts with, the vendor's build where it says more)."""
    m = _APACHE.match(text or "")
    if m is None:
        return None, None
    apache, rest = f"{m.group(1)}.{m.group(2)}.{m.group(3)}", m.group(4).strip()
    if not rest or rest in ("-SNAPSHOT",) or rest.startswith(("-preview", "-rc")):
        return apache, None
    if "amzn" in rest:  # EMR's builds: "3.5.0-amzn-1" (Amazon EMR release guide, "Spark release history")
        return apache, f"Amazon EMR build {text.strip()}"  # type: ignore[union-attr]
    return apache, f"vendor build {text.strip()}"  # type: ignore[union-attr]


def _databricks(tag: Optional[str]) -> tuple[Optional[str], Optional[str]]:
    """(Databricks Runtime name, its Apache release from :data:`DATABRICKS_RUNTIMES` or None)."""
    m = _DBR_TAG.match(tag or "")
    if m is None:
        return None, None
    line = f"{int(m.group(1))}.{int(m.group(2))}"
    flavour = (m.group(3) or "").strip("-")
    name = f"Databricks Runtime {line}" + (f" ({flavour})" if flavour else "")
    return name, DATABRICKS_RUNTIMES.get(line)


def release_from(log_start: Optional[str], dbc_metadata: Optional[str], props: dict[str, str]) -> LogRelease:
    """The release from the log's evidence, first that says (see the module doc)."""
    tag = props.get(config.DATABRICKS_SPARK_VERSION_TAG)
    return _release(log_start if isinstance(log_start, str) else None,
                    dbc_metadata if isinstance(dbc_metadata, str) else None, tag if isinstance(tag, str) else None)


@lru_cache(maxsize=64)
def _release(log_start: Optional[str], dbc_metadata: Optional[str], tag: Optional[str]) -> LogRelease:
    """:func:`release_from` by the three facts it reads (remembered: a listing asks once an
    execution, a million times for one log)."""
    runtime, from_table = _databricks(tag)
    for text, where in ((log_start, "SparkListenerLogStart's Spark Version"),
                        (dbc_metadata, "Databricks' DBCEventLoggingListenerMetadata event")):
        apache, build = _apache(text)
        if apache is not None:
            return LogRelease(apache, runtime or build, f"{where} ({text.strip()})")  # type: ignore[union-attr]
    if from_table is not None:
        return LogRelease(from_table, runtime, f"{config.DATABRICKS_SPARK_VERSION_TAG} (Databricks' release notes"
                                               f" list {runtime} as Apache Spark {from_table})")
    if runtime is not None:
        return LogRelease(None, runtime, f"{runtime} is not in the table of runtimes AQE Lens knows")
    return LogRelease(None, None, "the log names no Spark version (no SparkListenerLogStart, no runtime tag)")


def release_of(log: Any) -> LogRelease:
    """:func:`release_from` over a loaded :class:`~aqe_core.model.eventlog.EventLog`."""
    app = log.application
    return release_from(app.spark_version, getattr(app, "dbc_spark_version", None), log.spark_properties)
