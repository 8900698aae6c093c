"""Rule-engine speed (issue targets: a what-if over 10 shuffles x 10,000 partitions with skew
handling <= 50 ms; coalescing 1,000,000 partitions <= 1 s). Prints figures; asserts nothing.

    python -m bench.bench_rules
"""
from __future__ import annotations

import random
import sys

from aqe_core.config import AQEConf
from aqe_core.rules.shuffle_partitions_util import coalesce_partitions, coalesce_partitions_with_skew_sections
from aqe_core.rules.optimize_skewed_join import SkewJoinSide, optimize_skewed_join
from bench.timing import timeit

MIB = 1024 * 1024


def whatif_10x10k() -> None:
    rng = random.Random(7)
    n, maps = 10_000, 50
    shuffles = []
    for _ in range(10):
        sizes = [rng.randint(0, 2 * MIB) for _ in range(n)]
        for i in rng.sample(range(n), 20):
            sizes[i] = rng.randint(300, 900) * MIB
        shuffles.append(sizes)
    map_sizes = {}

    def sizes_for(k):
        def f(r):
            key = (k, r)
            if key not in map_sizes:
                total = shuffles[k][r]
                map_sizes[key] = [total // maps] * maps
            return map_sizes[key]
        return f

    conf = AQEConf.resolve("4.3.0", [{"spark.sql.adaptive.advisoryPartitionSizeInBytes": "64m"}])

    def run():
        for j in range(5):
            lk, rk = 2 * j, 2 * j + 1
            res = optimize_skewed_join(SkewJoinSide(shuffles[lk], sizes_for(lk)), SkewJoinSide(shuffles[rk], sizes_for(rk)),
                                       "inner", conf, spark_version="4.3.0")
            sections = {r: list(sec) for r, sec in res.sections.items()}
            coalesce_partitions_with_skew_sections([shuffles[lk], shuffles[rk]], sections, res.num_specs,
                                                   advisory_target_size=64 * MIB, min_num_partitions=2,
                                                   min_partition_size=MIB, spark_version="4.3.0")

    best, med = timeit(run, 7)
    print(f"what-if, 10 shuffles x {n:,} partitions (5 skewed joins + coalescing): best {best*1000:.1f} ms, median {med*1000:.1f} ms (target <= 50 ms)")


def coalesce_1m() -> None:
    rng = random.Random(3)
    sizes = [rng.randint(0, 200_000) for _ in range(1_000_000)]
    best, med = timeit(lambda: coalesce_partitions([sizes], advisory_target_size=64 * MIB, min_num_partitions=2,
                                                    min_partition_size=MIB, spark_version="4.3.0"), 3)
    print(f"coalescing 1,000,000 partitions (one shuffle): best {best:.3f} s, median {med:.3f} s (target <= 1 s)")


if __name__ == "__main__":
    print(f"python {sys.version.split()[0]}")
    whatif_10x10k()
    coalesce_1m()
