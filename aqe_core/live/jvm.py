"""py4j access to the Spark internals a capture needs, robust across Spark 3.0 - 4.3.

Two traps drive the design:

* **No py4j method call on ``SparkEnv``.** py4j resolves a method by listing the declared
  methods of the object's class; in PySpark 4.3 listing ``SparkEnv``'s methods loads a class
  that refers to ``com.google.protobuf.MessageOrBuilder``, which is not on the classpath of a
  ``pip install pyspark``, and the call dies with ``NoClassDefFoundError``. We never call a
  ``SparkEnv`` method: the ``SparkEnv`` object comes from ``SparkContext.env`` (a reference is
  returned without looking at its class) and its ``mapOutputTracker`` *field* is read through
  ``java.lang.reflect.Field`` obtained with ``Class.forName`` + ``getDeclaredField``, which
  does not resolve method signatures.
* **Round trips are expensive** (100-300 µs each on a busy laptop). Arrays are moved in one
  call: ``long[]`` through a ``ByteBuffer``, the per-map ``byte[]`` of compressed block sizes
  directly (py4j turns ``byte[]`` into ``bytes``), and lists of partition specs through
  their Scala ``toString`` (parsed and checked against the list's size).
"""
from __future__ import annotations

import math
import struct
from typing import Any, Optional

from aqe_core.model.scala_text import parse_specs  # noqa: F401 - the recorder's and tests' import path

#: ``MapStatus.LOG_BASE``: block sizes are stored as one byte, ``ceil(log_1.1(size))``
LOG_BASE = 1.1


def decompress_size(code: int) -> int:
    """``MapStatus.decompressSize``: ``0`` for 0, else ``(long) pow(1.1, code & 0xFF)``."""
    c = code & 0xFF
    return 0 if c == 0 else int(math.pow(LOG_BASE, c))


DECOMPRESS_TABLE = [decompress_size(c) for c in range(256)]


_CACHES: dict[int, dict[str, Any]] = {}


class JvmError(RuntimeError):
    """A Spark internal could not be reached the expected way."""


class Jvm:
    """Reflection and bulk-transfer helpers over one SparkSession's py4j gateway."""

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self.jvm = spark._jvm
        self.sc = spark.sparkContext
        self.jsc = self.sc._jsc.sc()
        # reflection handles live as long as the JVM: share them between Recorders
        cache = _CACHES.setdefault(id(self.jvm), {"fields": {}, "mot": None})
        self._fields: dict[tuple[str, str], Any] = cache["fields"]
        self._cache = cache

    # -- reflection --------------------------------------------------------------------
    def class_for(self, name: str) -> Any:
        return self.jvm.java.lang.Class.forName(name)

    def field_handle(self, class_name: str, field_name: str) -> Any:
        """An accessible ``java.lang.reflect.Field`` (searched up the class hierarchy)."""
        key = (class_name, field_name)
        f = self._fields.get(key)
        if f is not None:
            return f
        c = self.class_for(class_name)
        last: Optional[Exception] = None
        while c is not None:
            try:
                f = c.getDeclaredField(field_name)
                f.setAccessible(True)
                self._fields[key] = f
                return f
            except Exception as e:  # noqa: BLE001 - py4j wraps NoSuchFieldException
                last = e
                c = c.getSuperclass()
        raise JvmError(f"no field {field_name} in {class_name}: {last}")

    def field(self, obj: Any, class_name: str, field_name: str) -> Any:
        return self.field_handle(class_name, field_name).get(obj)

    def member(self, obj: Any, name: str, class_name: Optional[str] = None) -> Any:
        """``obj.name()`` if it is a public method, else the (private) field ``name``."""
        try:
            return getattr(obj, name)()
        except Exception:  # noqa: BLE001 - py4j: not a public method here, read the field
            cname = class_name or obj.getClass().getName()
            return self.field(obj, cname, name)

    # -- conversions -------------------------------------------------------------------
    def long_array(self, arr: Any) -> list[int]:
        """A Java ``long[]`` as a Python list, in a handful of calls whatever its length."""
        n = len(arr)
        if n == 0:
            return []
        bb = self.jvm.java.nio.ByteBuffer.allocate(8 * n)
        bb.asLongBuffer().put(arr)
        raw = bb.array()
        return list(struct.unpack(f">{n}q", bytes(raw)))

    @staticmethod
    def seq(seq: Any) -> list[Any]:
        """A Scala ``Seq`` as a list of py4j references."""
        n = seq.size()
        return [seq.apply(i) for i in range(n)]

    @staticmethod
    def option(opt: Any) -> Any:
        return opt.get() if opt.isDefined() else None

    # -- bulk reads through the AQE Lens jar ----------------------------------------------
    def bulk_method(self) -> Optional[Any]:
        """``io.aqelens.listener.Bulk.mapSizes`` from the shipped jar, loaded in a class loader
        of its own (the session need not have the jar on its classpath); None if it cannot be."""
        if "bulk" not in self._cache:
            self._cache["bulk"] = None
            try:
                from aqe_core.listener import JAR_PATH

                gw = self.sc._gateway
                jl = self.jvm.java.lang
                urls = gw.new_array(self.jvm.java.net.URL, 1)
                urls[0] = self.jvm.java.io.File(str(JAR_PATH)).toURI().toURL()
                loader = self.jvm.java.net.URLClassLoader(urls, jl.Thread.currentThread().getContextClassLoader())
                cls = jl.Class.forName("io.aqelens.listener.Bulk", True, loader)
                types = gw.new_array(jl.Class, 3)
                types[0], types[1], types[2] = jl.Class.forName("java.lang.Object"), jl.Integer.TYPE, jl.Class.forName("[B")
                self._cache["bulk"] = cls.getMethod("mapSizes", types)
            except Exception:  # noqa: BLE001 - no jar, an old jar, a JVM that refuses: the per-map path
                self._cache["bulk"] = None
        return self._cache["bulk"]

    def bulk_map_sizes(self, shuffle_id: int, wanted: list[int]) -> Optional[tuple[int, list[bool], list[str], list[list[int]]]]:
        """Every map's size for each reducer in ``wanted``, in one round trip: (maps, present
        per map, MapStatus class names, rows by reducer). None when the bulk path is not
        available or the shuffle is unregistered."""
        method = self.bulk_method()
        if method is None:
            return None
        gw = self.sc._gateway
        args = gw.new_array(self.jvm.java.lang.Object, 3)
        args[0], args[1], args[2] = self.jsc, self.jvm.java.lang.Integer(int(shuffle_id)), struct.pack(f">{len(wanted)}i", *wanted)
        raw = method.invoke(None, args)
        if raw is None:
            return None
        raw = bytes(raw)
        n_maps, k, n_names = struct.unpack_from(">iii", raw, 0)
        pos = 12 + n_names
        classes = [c for c in raw[12:pos].decode("utf-8").split(",") if c]
        present = [b == 1 for b in raw[pos:pos + n_maps]]
        pos += n_maps
        import array
        sizes = array.array("q")
        sizes.frombytes(raw[pos:pos + 8 * k * n_maps])
        if struct.pack("=q", 1) != struct.pack(">q", 1):
            sizes.byteswap()
        flat = sizes.tolist()
        return n_maps, present, classes, [flat[i * n_maps:(i + 1) * n_maps] for i in range(k)]

    # -- map output tracker -----------------------------------------------------------
    def map_output_tracker(self) -> Any:
        """``SparkEnv.get.mapOutputTracker`` without calling a method of ``SparkEnv``."""
        if self._cache["mot"] is None:
            env = self.jsc.env()
            self._cache["mot"] = self.field(env, "org.apache.spark.SparkEnv", "mapOutputTracker")
        return self._cache["mot"]

    def map_statuses(self, shuffle_id: int) -> Optional[Any]:
        """The ``MapStatus[]`` of a registered shuffle (None when unregistered / cleaned up)."""
        mot = self.map_output_tracker()
        statuses = mot.shuffleStatuses()
        opt = statuses.get(shuffle_id)
        status = self.option(opt) if hasattr(opt, "isDefined") else opt
        if status is None:
            return None
        return self.field(status, "org.apache.spark.ShuffleStatus", "mapStatuses")


# Partition specs from their Scala toString: aqe_core.model.scala_text.parse_specs (listener
# events carry the same text)
