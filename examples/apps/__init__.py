"""An MCP App: an order tool whose result an HTML view shows (``python -m examples.apps``)."""
