"""The model every layer above shares: plans, partition specs, reasons with their evidence,
captures, event-log executions and the one ``Query`` they all become.

Data only: dataclasses and the small helpers that read and check them. Nothing here writes a
file, keeps a temporary file or compresses (issue 26): user presets are kept by
:mod:`aqe_core.user_presets`, a big log's spill file and packed bytes belong to the event-log
reader (:mod:`aqe_core.readers.eventlog.spill_file`, :mod:`~aqe_core.readers.eventlog.packed`).
Imports only the base modules (``versions``, ``config``, ``units``, ``plain_text``); readers,
rules and the engine build on it. See docs/architecture.md.
"""
