"""2025-11-25's object-only ``structuredContent``: the one wrap of a non-object value and
its output schema, ``{"result": ...}``, that compiling and dispatching both follow."""

from __future__ import annotations

from typing import Any

LEGACY_WRAP_KEY = "result"
"""In the 2025-11-25 era ``structuredContent`` must be an object: other values are
wrapped as ``{"result": value}`` (the convention of the SDK's own ``MCPServer``)."""


def wrap_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The 2025-11-25 output schema of a non-object contract.

    The contract's ``$defs`` move to the wrapper's root: its ``$ref``s read
    ``#/$defs/...`` from the root of the document, which is now the wrapper.
    """
    inner = {key: value for key, value in schema.items() if key != "$defs"}
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {LEGACY_WRAP_KEY: inner},
        "required": [LEGACY_WRAP_KEY],
    }
    if "$defs" in schema:
        wrapped["$defs"] = schema["$defs"]
    return wrapped
