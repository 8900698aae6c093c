"""The one line of an exception that says why: Spark's errors arrive as many lines (a Java stack,
a Python worker's traceback), and a message for people names the cause, not the wrapper."""
from __future__ import annotations

__all__ = ["reason_line"]


def reason_line(exc: BaseException, limit: int = 300) -> str:
    """The first ``...Exception: ...`` / ``...Error: ...`` line (Java's exception, or the error
    that ended a Python worker's traceback), else the first line, else the exception's type.

    >>> reason_line(RuntimeError("An exception was thrown from the Python worker:\\nTraceback (most recent call last):\\n"
    ...                          "  File \\"x.py\\", line 1, in <module>\\nModuleNotFoundError: No module named 'pandas'"))
    "ModuleNotFoundError: No module named 'pandas'"
    >>> reason_line(RuntimeError(": java.net.BindException: Address already in use\\n\\tat sun.nio.ch.Net.bind0"))
    'java.net.BindException: Address already in use'
    >>> reason_line(KeyError())
    'KeyError'
    """
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - py4j describes a Java error by asking the JVM, which may be gone
        return f"{type(exc).__name__} (its message could not be read: the JVM no longer answers)"[:limit]
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        body = ln.lstrip(": ")
        if ("Exception: " in body or "Error: " in body) and not body.startswith("at "):
            return body[:limit]
    return (lines[0] if lines else type(exc).__name__)[:limit]
