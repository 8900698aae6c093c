"""Compatibility path (issue 9): moved to :mod:`aqe_core.rules.optimize_skewed_join` (named after
Spark's class). Every name stays importable from here, with ``K_FACTOR`` / ``K_THRESHOLD`` as
aliases of the config handles."""
# compat shim (issue 9)
from aqe_core import config
from aqe_core.rules import optimize_skewed_join as _new

globals().update({k: v for k, v in vars(_new).items() if not k.startswith("__")})

K_FACTOR = config.SKEW_JOIN_SKEWED_PARTITION_FACTOR
K_THRESHOLD = config.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD
K_ADVISORY = config.ADVISORY_PARTITION_SIZE_IN_BYTES
K_ENABLED = config.SKEW_JOIN_ENABLED
K_LOCAL_READ = config.LOCAL_SHUFFLE_READER_ENABLED
