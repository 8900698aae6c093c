"""A Java error whose JVM is gone cannot be described: py4j's ``Py4JJavaError.__str__`` asks the
JVM, and raises when it no longer answers. CI saw a failed Spark start crash on it (issue 38's
run: ``_lost_connection`` formatted the error, py4j raised ``Py4JNetworkError``). Describing an
error never raises; an error that cannot be described is a lost JVM."""
from __future__ import annotations

from aqe_core.exception_text import reason_line
from aqe_core.live.runtime import _lost_connection


class _Undescribable(Exception):
    """Stands for py4j's Py4JJavaError after its JVM died (its __str__ calls the gateway)."""

    def __str__(self) -> str:
        raise ConnectionRefusedError(111, "Connection refused")


def test_an_error_that_cannot_be_described_is_a_lost_jvm_and_a_line():
    assert _lost_connection(_Undescribable()) is True
    assert reason_line(_Undescribable()) == "_Undescribable (its message could not be read: the JVM no longer answers)"


def test_a_describable_spark_error_is_not_a_lost_connection():
    assert _lost_connection(RuntimeError("[CANNOT_PARSE] Could not parse Master URL: 'local[abc]'")) is False
