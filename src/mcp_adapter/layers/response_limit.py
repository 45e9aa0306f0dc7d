"""``ResponseLimit``: refuse a component's output past a size, before it becomes a result."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver.utilities.types import Audio, Image
from pydantic_core import to_json

from mcp_adapter.declare.middleware import Call, Next
from mcp_adapter.declare.response import McpResponse
from mcp_adapter.errors import ToolError


def response_size(value: Any) -> int:
    """The size ``ResponseLimit`` measures: UTF-8 bytes of the compact JSON of ``value``.

    An ``McpResponse`` counts its content blocks (each as on the wire: by alias, without
    null fields) plus its structured content; a list of them, their sum; a protocol result
    (``CallToolResult``, ``ListToolsResult``, ...) or a content block, itself; any other
    value (a function tool's plain or typed value) itself, bytes as base64, an image or
    audio value as its content block. Not counted: the JSON-RPC envelope and ``_meta``
    the dispatcher adds, and the copy of a tool's structured content the result also
    carries as text, so the message sent is bigger (up to about twice for a structured
    result).

    >>> response_size(McpResponse.text("hi"))  # {"type":"text","text":"hi"}
    27
    >>> response_size({"n": 1})
    7
    """
    if isinstance(value, McpResponse):
        size = sum(_json_size(block) for block in value.content)
        return size + (_json_size(value.structured_content) if value.has_structured else 0)
    if isinstance(value, list | tuple) and value and all(isinstance(v, McpResponse) for v in value):
        return sum(response_size(item) for item in value)
    return _json_size(value)


def _json_size(value: Any) -> int:
    return len(
        to_json(value, by_alias=True, exclude_none=True, bytes_mode="base64", fallback=_fallback)
    )


def _fallback(value: Any) -> Any:
    """What ``to_json`` cannot serialize itself: media as their blocks, else its text."""
    if isinstance(value, Image):
        return value.to_image_content()
    if isinstance(value, Audio):
        return value.to_audio_content()
    if isinstance(value, McpResponse):
        return {"content": value.content, "structured": value.structured_content}
    return str(value)


class ResponseLimit:
    """Middleware that refuses an output larger than ``max_bytes`` (see ``response_size``).

    Past the limit it raises ``ToolError("Response too large: N bytes, limit M")``: a tool
    answers a tool error result, any other kind (a resource read, a prompt, a listing or a
    completion, on ``Server.middleware``) the protocol error ``-32603`` with that message.
    The output is serialized once here to be measured, and a refused one is never turned
    into a result; an accepted one is then serialized as usual, which is the layer's cost
    (one compact ``pydantic_core.to_json`` of the output).
    """

    __slots__ = ("max_bytes",)

    def __init__(self, max_bytes: int) -> None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise ValueError(f"ResponseLimit needs a positive number of bytes, not {max_bytes!r}")
        self.max_bytes = max_bytes

    async def __call__(self, call: Call, call_next: Next) -> Any:
        value = await call_next(call)
        size = response_size(value)
        if size > self.max_bytes:
            raise ToolError(f"Response too large: {size} bytes, limit {self.max_bytes}")
        return value
