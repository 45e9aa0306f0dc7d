"""Reaching a tool through the host and through SDK servers, in wire form, comparably.

The host is ``McpTestClient`` over a ``Platform``-compiled catalog (real JSON-RPC
text); the SDK servers are reached with ``mcp.Client`` (2026-07-28 direct dispatch,
or the 2025-11-25 handshake over JSON-RPC streams).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mcp import Client, MCPError

from container import Container
from mcp_adapter import Catalog
from mcp_adapter.testing import McpTestClient

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ERAS = (MODERN, LEGACY)

SERVER_INFO = "io.modelcontextprotocol/serverInfo"
_INCIDENT = re.compile(r"\b[0-9a-f]{12}\b")


def dump(model: Any) -> dict[str, Any]:
    """The wire form of a model the SDK client returned: what was set, without nulls."""
    value: dict[str, Any] = model.model_dump(
        by_alias=True, mode="json", exclude_none=True, exclude_unset=True
    )
    return value


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(item) for item in value]
    return value


def comparable(message: Mapping[str, Any]) -> dict[str, Any]:
    """A result or error without what legitimately differs: server identity, incident ids."""
    value = _drop_none(dict(message))
    meta = dict(value.pop("_meta", None) or {})
    meta.pop(SERVER_INFO, None)
    if "incident" in meta:
        meta["incident"] = "<incident>"
    if meta:
        value["_meta"] = meta
    for block in value.get("content") or []:
        if isinstance(block.get("text"), str) and "incident" in block["text"]:
            block["text"] = _INCIDENT.sub("<incident>", block["text"])
    if "error" in value:
        value["error"] = {"code": value["error"]["code"], "message": value["error"]["message"]}
    return value


async def host_call(
    container: Container, catalog: Catalog, name: str, arguments: Mapping[str, Any], era: str
) -> dict[str, Any]:
    client = McpTestClient(container, catalog, protocol=era)  # type: ignore[arg-type]
    message = (await client.tool(name, arguments)).message
    if "error" in message:
        return {"error": message["error"]}
    result: dict[str, Any] = message["result"]
    return result


async def host_tools(container: Container, catalog: Catalog, era: str) -> list[dict[str, Any]]:
    client = McpTestClient(container, catalog, protocol=era)  # type: ignore[arg-type]
    result = (await client.list_tools()).result
    assert result is not None
    tools: list[dict[str, Any]] = result["tools"]
    return [_drop_none(tool) for tool in tools]


def _client(server: Any, era: str) -> Client:
    return Client(server, mode=MODERN if era == MODERN else "legacy")


async def sdk_call(
    server: Any, name: str, arguments: Mapping[str, Any], era: str
) -> dict[str, Any]:
    async with _client(server, era) as client:
        try:
            result = await client.call_tool(name, dict(arguments))
        except MCPError as exc:
            return {"error": {"code": exc.code, "message": exc.message}}
    return dump(result)


async def sdk_tools(server: Any, era: str) -> list[dict[str, Any]]:
    async with _client(server, era) as client:
        listed = await client.list_tools()
    return [dump(tool) for tool in listed.tools]
