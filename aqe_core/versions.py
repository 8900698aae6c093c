"""Spark version handling.

AQE's rules changed between releases; every rule branches on a :class:`SparkVersion`
rather than on strings so the boundaries are explicit. :data:`PROFILES` groups the releases
between two boundaries (3.1, 3.2, 3.3, 3.4.0, 3.4.2, 3.5, 4.1, 4.2, 4.3);
tests/config/test_profiles.py derives the boundaries from the rules' version gates and the
recorded releases, so the two cannot drift apart.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering

_VERSION_RE = re.compile(r"^\s*(\d+)\.(\d+)(?:\.(\d+))?")
#: strings already parsed (SparkVersion is frozen, so one object serves every caller)
_PARSED: dict[str, "SparkVersion"] = {}

#: Release profiles whose rule behaviour differs, oldest first; each maps to the first release
#: it covers and runs to the next one. A name is "first" or "first-last" ("3.4.2-3.4.x": the
#: rest of the 3.4 line). Why each boundary is one (the gate in the rules, what was recorded):
#: docs/spark-releases.md.
PROFILES: dict[str, str] = {
    "3.0": "3.0.0",
    "3.1": "3.1.0",
    "3.2": "3.2.0",
    "3.3": "3.3.0",
    "3.4.0-3.4.1": "3.4.0",   # skewedPartitionFactor a double
    "3.4.2-3.4.x": "3.4.2",   # applyFinalStageShuffleOptimizations
    "3.5-4.0": "3.5.0",
    "4.1": "4.1.0",           # AQE in stateless streaming; UnionExec reports its partitioning
    "4.2": "4.2.0",           # SPARK-44065: a broadcast join's streamed side split
    "4.3": "4.3.0",
}

#: Oldest and newest release the engine models.
OLDEST = "3.0.0"
NEWEST = "4.3.0"


class UnsupportedSparkVersion(ValueError):
    """The version string is not one AQE Lens can model (before 3.0 AQE did not exist)."""


@total_ordering
@dataclass(frozen=True)
class SparkVersion:
    """A Spark release number, compared numerically ("3.10" > "3.9")."""

    major: int
    minor: int
    patch: int = 0

    @classmethod
    def parse(cls, value: "str | SparkVersion") -> "SparkVersion":
        """Parse "3.5.1", "4.3.0-SNAPSHOT", "3.2" (patch 0); SparkVersion passes through."""
        if isinstance(value, SparkVersion):
            return value
        hit = _PARSED.get(value) if isinstance(value, str) else None
        if hit is not None:  # rules compare with literals ("3.2") in every replay
            return hit
        m = _VERSION_RE.match(str(value))
        if not m:
            raise UnsupportedSparkVersion(f"not a Spark version: {value!r}")
        v = cls(int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))
        if v < SparkVersion(3, 0, 0):
            raise UnsupportedSparkVersion(
                f"Spark {value} has no Adaptive Query Execution rules to model (AQE starts in 3.0)"
            )
        if isinstance(value, str) and len(_PARSED) < 1024:  # bounded: version strings come from logs too
            _PARSED[value] = v
        return v

    def _key(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)

    def __lt__(self, other: object) -> bool:
        if type(other) is SparkVersion:  # fast path: rules compare versions in loops
            return (self.major, self.minor, self.patch) < (other.major, other.minor, other.patch)
        other = SparkVersion.parse(other) if isinstance(other, str) else other
        if not isinstance(other, SparkVersion):
            return NotImplemented
        return self._key() < other._key()

    def __ge__(self, other: object) -> bool:
        result = self.__lt__(other)
        return result if result is NotImplemented else not result

    def __eq__(self, other: object) -> bool:
        if type(other) is SparkVersion:  # fast path, as in __lt__
            return (self.major, self.minor, self.patch) == (other.major, other.minor, other.patch)
        if isinstance(other, str):
            try:
                other = SparkVersion.parse(other)
            except UnsupportedSparkVersion:
                return False
        if not isinstance(other, SparkVersion):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def at_least(self, version: str) -> bool:
        return self >= SparkVersion.parse(version)

    @property
    def profile(self) -> str:
        """The behaviour profile this release belongs to (see :data:`PROFILES`)."""
        name = "3.0"
        for prof, first in PROFILES.items():
            if self >= SparkVersion.parse(first):
                name = prof
        return name

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"


def as_version(value: "str | SparkVersion") -> SparkVersion:
    """Shorthand for :meth:`SparkVersion.parse`."""
    return SparkVersion.parse(value)
