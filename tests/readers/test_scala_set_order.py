"""The order Spark walks an execution's stages in (aqe_core.readers.eventlog.scala_set) is the
order of a real Scala 2.13 immutable Set, built in the JVM of the PySpark the tests run."""
from __future__ import annotations

import random

from aqe_core.readers.eventlog.scala_set import stage_order


def _scala_set_order(jvm, values: list[int]) -> list[int]:
    module = jvm.java.lang.Class.forName("scala.collection.immutable.Set$").getField("MODULE$").get(None)
    s = module.empty()
    for v in values:
        s = getattr(s, "$plus")(v)
    it = s.iterator()
    out = []
    while it.hasNext():
        out.append(int(it.next()))
    return out


def test_stage_order_is_the_scala_sets(spark):
    jvm = spark.sparkContext._jvm
    rng = random.Random(23)
    cases = [list(range(n)) for n in (1, 4, 5, 33, 200)]
    cases += [rng.sample(range(100_000), rng.randint(1, 300)) for _ in range(30)]
    for values in cases:
        assert stage_order(values, 4) == _scala_set_order(jvm, values), values[:8]
    # the tie in the TPC-DS-like sample: two stages read one reused exchange, Spark named 185
    order = _scala_set_order(jvm, [168, 185, 1, 2, 3])
    assert order.index(185) < order.index(168) and stage_order([168, 185, 1, 2, 3], 4) == order


def test_small_sets_and_spark_3_keep_insertion_order():
    assert stage_order([9, 3, 7, 1], 4) == [9, 3, 7, 1]
    assert stage_order([9, 3, 7, 1, 5], 3) == [9, 3, 7, 1, 5]
