"""``ResponseLimit``: refuse an answer past a size, measured as it is sent."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver.utilities.types import Audio, Image
from pydantic_core import to_json

from mcp_adapter.declare.middleware import Call, Next, Stage, checked_stage
from mcp_adapter.declare.response import McpResponse
from mcp_adapter.errors import ToolError


def response_size(value: Any) -> int:
    """The size ``ResponseLimit`` measures: UTF-8 bytes of the compact JSON of ``value``.

    A protocol result (``CallToolResult``, ``ReadResourceResult``, ``ListToolsResult``,
    ...), what the request stage sees, is measured as the SDK sends it (by alias, without
    null fields): the ``result`` member of the JSON-RPC response. At the call stage,
    where the handler's value is seen before it becomes a result: an ``McpResponse``
    counts its content blocks plus its structured content; a list of them, their sum; a
    content block, itself; any other value (a function tool's plain or typed value)
    itself, bytes as base64, an image or audio value as its content block.

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
    """Middleware that refuses an answer larger than ``max_bytes`` (see ``response_size``).

    Past the limit it raises ``ToolError("Response too large: N bytes, limit M")``: a tool
    answers a tool error result, any other kind (a resource read, a prompt, a listing or a
    completion) the protocol error ``-32603`` with that message.

    ``stage="request"`` (the default): what is measured is the protocol result as it is
    sent, so ``max_bytes`` bounds the ``result`` of every answer of the server (the
    JSON-RPC envelope around it adds about 40 bytes and the request's id); its cost is
    one more compact serialization of each result. ``stage="call"`` (the one way to put
    it on a single component) measures the handler's value before it becomes a result:
    cheaper for a refused value, which is never built, but not a bound on what is sent
    (the result repeats a resource's URI per content item, renders a plain value as
    indented JSON, carries structured content twice).
    """

    __slots__ = ("max_bytes", "stage")

    def __init__(self, max_bytes: int, *, stage: Stage = "request") -> None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise ValueError(f"ResponseLimit needs a positive number of bytes, not {max_bytes!r}")
        self.max_bytes = max_bytes
        self.stage = checked_stage(stage, "ResponseLimit")

    async def __call__(self, call: Call, call_next: Next) -> Any:
        value = await call_next(call)
        size = response_size(value)
        if size > self.max_bytes:
            raise ToolError(f"Response too large: {size} bytes, limit {self.max_bytes}")
        return value
