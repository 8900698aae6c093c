"""Spark's ``JoinType``: one name per join type, whatever the plan or the SQL spelled.

Mirrors ``org.apache.spark.sql.catalyst.plans.JoinType.apply`` (3.0.1 - 4.3.0), which reads
SQL words (``left_outer``, ``semi``), plus the names plans print (``LeftOuter``,
``ExistenceJoin(exists#12)``). The join rules compare these names.

    >>> normalize_join_type("left_outer"), normalize_join_type("LeftOuter"), normalize_join_type("semi")
    ('LeftOuter', 'LeftOuter', 'LeftSemi')
    >>> normalize_join_type("ExistenceJoin(exists#12)")
    'ExistenceJoin'
    >>> normalize_join_type("LeftSingle")  # unknown names pass through
    'LeftSingle'
"""
from __future__ import annotations

_JOIN_TYPE_ALIASES = {
    "inner": "Inner", "cross": "Cross", "leftsemi": "LeftSemi", "semi": "LeftSemi",
    "leftanti": "LeftAnti", "anti": "LeftAnti", "leftouter": "LeftOuter", "left": "LeftOuter",
    "rightouter": "RightOuter", "right": "RightOuter", "fullouter": "FullOuter", "full": "FullOuter",
    "outer": "FullOuter", "existencejoin": "ExistenceJoin",
}


def normalize_join_type(join_type: str) -> str:
    """Spark's JoinType names ("LeftOuter") from plan strings or SQL words ("left_outer")."""
    key = join_type.replace("_", "").replace(" ", "").lower()
    if key.startswith("existencejoin"):
        return "ExistenceJoin"
    return _JOIN_TYPE_ALIASES.get(key, join_type)
