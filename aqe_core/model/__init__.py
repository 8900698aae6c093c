"""The model every layer above shares: plans, partition specs, reasons with their evidence,
captures, event-log executions and the one ``Query`` they all become.

Imports only the base modules (``versions``, ``config``, ``units``, ``plain_text``, ``storage``,
``server_settings``); readers, rules and the engine build on it. See docs/architecture.md.
"""
