"""One 2026-07-28 request as the run sends it: a POST with the ``_meta`` envelope and the
routing headers (docs/tasks.md, "Raw HTTP"), its answer sorted into what the run counts.

An :class:`Answer` is ``ok`` (a result), ``error`` (a JSON-RPC error, an HTTP error status
from the balancer or a replica, or a connection the server closed: each a documented way
to refuse or fail a request), or ``hung`` (no answer within the bound). The raw text is
kept so every answer can be scanned for another identity's data.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

import httpx2

PROTOCOL = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}},
        "elicitation": {"form": {}},
    },
}
TRACEBACK = "Traceback (most recent call last)"


@dataclass
class Answer:
    kind: str
    """``ok``, ``error`` or ``hung``."""
    seconds: float
    text: str = ""
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    status: int = 0

    @property
    def ok(self) -> bool:
        return self.kind == "ok" and self.result is not None

    def texts(self) -> list[str]:
        content = (self.result or {}).get("content") or []
        return [part.get("text", "") for part in content if isinstance(part, dict)]


def headers(method: str, name: str, token: str) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL,
        "Mcp-Method": method,
        "Mcp-Name": name,
        "Authorization": f"Bearer {token}",
    }


def _message(response: httpx2.Response) -> dict[str, Any]:
    body = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        body = [line[5:] for line in body.splitlines() if line.startswith("data:")][-1]
    message: dict[str, Any] = json.loads(body)
    return message


async def send(
    http: httpx2.AsyncClient,
    url: str,
    token: str,
    method: str,
    name: str,
    params: dict[str, Any],
    bound: float,
) -> Answer:
    """Send one request; never waits past ``bound`` seconds."""
    request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": ENVELOPE}}
    started = time.monotonic()
    try:
        response = await asyncio.wait_for(
            http.post(url, json=request, headers=headers(method, name, token), timeout=bound),
            bound,
        )
    except (httpx2.TimeoutException, TimeoutError):
        return Answer("hung", time.monotonic() - started)
    except httpx2.TransportError as exc:
        return Answer("error", time.monotonic() - started, text=f"transport: {exc!r}")
    seconds = time.monotonic() - started
    text = response.text
    if response.status_code >= 400 and not text.lstrip().startswith("{"):
        return Answer("error", seconds, text=text, status=response.status_code)
    try:
        message = _message(response)
    except (ValueError, IndexError):
        return Answer("error", seconds, text=text, status=response.status_code)
    if "error" in message:
        return Answer("error", seconds, text, error=message["error"], status=response.status_code)
    return Answer("ok", seconds, text, result=message.get("result"), status=response.status_code)


async def call(
    http: httpx2.AsyncClient,
    url: str,
    token: str,
    tool: str,
    arguments: dict[str, Any],
    bound: float,
    **extra: Any,
) -> Answer:
    params = {"name": tool, "arguments": arguments, **extra}
    return await send(http, url, token, "tools/call", tool, params, bound)


async def on_task(
    http: httpx2.AsyncClient,
    url: str,
    token: str,
    method: str,
    task_id: str,
    bound: float,
    **params: Any,
) -> Answer:
    return await send(http, url, token, method, task_id, {"taskId": task_id, **params}, bound)
