"""Long-running tools as tasks (the ``io.modelcontextprotocol/tasks`` extension), run on
Docket: the wire shapes, the frozen request a body starts from, the engine, and the
extension's methods (docs/tasks.md)."""

from __future__ import annotations

from mcp_adapter.tasks.wire import EXTENSION, CreateTaskResult

__all__ = ["EXTENSION", "CreateTaskResult"]
