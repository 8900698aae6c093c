"""The Model Context Protocol server (``python -m aqe_core mcp``, docs/mcp.md): the CLI's
answers as tools an AI assistant calls, at the CLI's layer. :mod:`.tools` and
:mod:`.advice_tools` answer without the SDK; :mod:`.server` wires them to it."""
