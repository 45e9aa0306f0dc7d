"""One 2025-11-25 input round as the run sends it, by hand over a stateful session:
``initialize``, then ``tools/call`` whose SSE answer carries the server's
``elicitation/create`` first; the answer goes back in a POST of its own while the call's
stream waits, then the call's result arrives on that stream.

By hand rather than with the SDK's client, so that what is timed is the server: the SDK
client, when a session's stream broke during a Redis restart, was seen waiting past the
bound where this client got its answer (docs/reliability.md).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx2

from benchmarks.chaos.wire import Answer

PROTOCOL = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
REPLY_TRIES = 20
REPLY_PAUSE = 0.5


def _headers(token: str, session: str | None = None) -> dict[str, str]:
    found = {"Content-Type": "application/json", "Accept": ACCEPT}
    found["Authorization"] = f"Bearer {token}"
    if session is not None:
        found["Mcp-Session-Id"] = session
        found["MCP-Protocol-Version"] = PROTOCOL
    return found


async def _open(http: httpx2.AsyncClient, url: str, token: str) -> str | Answer:
    """A new session's id, or the answer that refused one."""
    hello = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "chaos", "version": "1"},
        },
    }
    response = await http.post(url, json=hello, headers=_headers(token))
    session = response.headers.get("mcp-session-id")
    if response.status_code != 200 or session is None:
        return Answer("error", 0.0, text=response.text, status=response.status_code)
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await http.post(url, json=done, headers=_headers(token, session))
    return session


async def _reply(
    http: httpx2.AsyncClient, url: str, headers: dict[str, str], reply: dict[str, Any]
) -> bool:
    """Send the answer to the server's question until it is taken (``202``), for
    ``REPLY_TRIES`` attempts: while Redis stalls every replica is out of the balancer,
    which answers ``503``, and the call would wait for an answer that never came."""
    for _ in range(REPLY_TRIES):
        response = await http.post(url, json=reply, headers=headers)
        if response.is_success:
            return True
        await asyncio.sleep(REPLY_PAUSE)
    return False


async def _round(
    http: httpx2.AsyncClient, url: str, token: str, session: str, arguments: dict[str, Any]
) -> Answer:
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "ask", "arguments": arguments},
    }
    text: list[str] = []
    async with http.stream("POST", url, json=call, headers=_headers(token, session)) as response:
        if response.status_code != 200:
            body = (await response.aread()).decode(errors="replace")
            return Answer("error", 0.0, text=body, status=response.status_code)
        async for line in response.aiter_lines():
            if not line.startswith("data:") or not line[5:].strip():
                continue
            text.append(line)
            message = json.loads(line[5:])
            if message.get("method") == "elicitation/create":
                reply = {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {"action": "accept", "content": {"ok": True}},
                }
                if not await _reply(http, url, _headers(token, session), reply):
                    body = "the balancer did not take the answer: " + "\n".join(text)
                    return Answer("error", 0.0, text=body)
            elif message.get("id") == 1:
                kind = "error" if "error" in message else "ok"
                return Answer(
                    kind, 0.0, "\n".join(text), message.get("result"), message.get("error")
                )
    return Answer("error", 0.0, text="\n".join(text) or "the stream ended without an answer")


async def ask(url: str, token: str, arguments: dict[str, Any], bound: float) -> Answer:
    """A session opened, one ``ask`` answered through it, the session closed; never waits
    past ``bound`` seconds."""
    started = time.monotonic()
    try:
        async with asyncio.timeout(bound), httpx2.AsyncClient(timeout=bound) as http:
            session = await _open(http, url, token)
            if isinstance(session, Answer):
                answer = session
            else:
                answer = await _round(http, url, token, session, arguments)
                await http.delete(url, headers=_headers(token, session))
    except TimeoutError:
        return Answer("hung", time.monotonic() - started)
    except httpx2.HTTPError as exc:
        answer = Answer("error", 0.0, text=f"transport: {exc!r}")
    answer.seconds = time.monotonic() - started
    return answer
