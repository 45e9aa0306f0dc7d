"""The request the HTTP benchmarks send, and the answers it must get.

One 2026-07-28 ``tools/call`` of the per-call workload's ``add`` tool
(:mod:`benchmarks.mcp_workload`) with its per-request ``_meta`` envelope and the
headers the SDK's streamable HTTP client sends, posted to :data:`PATH` on
:data:`HOST`; and the checks of an answer (the structured sum, the same as JSON
text) and of a refusal (arguments outside the schema). Shared by the suite
(:mod:`benchmarks.http_suite`), the servers it runs
(:mod:`benchmarks.http_servers`) and the profiler (:mod:`benchmarks.http_profile`).
"""

from __future__ import annotations

import json
from typing import Any

from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    PROTOCOL_VERSION_META_KEY,
)

from benchmarks.mcp_workload import TOOL

HOST = "127.0.0.1"
PATH = "/mcp"
PROTOCOL = "2026-07-28"

# -- the request -------------------------------------------------------------------


def request_body(a: Any = 1, b: Any = 2, request_id: int = 1) -> bytes:
    """One 2026-07-28 ``tools/call`` with its per-request ``_meta`` envelope."""
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {
            "name": TOOL,
            "arguments": {"a": a, "b": b},
            "_meta": {
                PROTOCOL_VERSION_META_KEY: PROTOCOL,
                CLIENT_INFO_META_KEY: {"name": "mcp-adapter-http-bench", "version": "1"},
                CLIENT_CAPABILITIES_META_KEY: {},
            },
        },
    }
    return json.dumps(message, separators=(",", ":")).encode()


HEADERS: tuple[tuple[str, str], ...] = (
    ("Accept", "application/json, text/event-stream"),
    ("MCP-Protocol-Version", PROTOCOL),
    ("Mcp-Method", "tools/call"),
    ("Mcp-Name", TOOL),
)
"""What the SDK's streamable HTTP client sends with a 2026-07-28 ``tools/call``."""
BODY = request_body()
EXPECT = '"structuredContent":{"sum":3}'
"""Every measured answer must contain this (the SDK writes compact JSON)."""

# -- the answer --------------------------------------------------------------------


def check_answer(status: int, answer: Any, total: int, who: str) -> None:
    """A 200 with ``structuredContent == {"sum": total}`` and the same as JSON text."""
    problems = []
    result = answer.get("result") if isinstance(answer, dict) else None
    if status != 200 or not isinstance(result, dict):
        raise AssertionError(f"{who}: HTTP {status}: {str(answer)[:300]}")
    if result.get("isError"):
        problems.append(f"isError: {result.get('content')}")
    if result.get("structuredContent") != {"sum": total}:
        problems.append(f"structuredContent {result.get('structuredContent')!r}")
    texts = [
        block.get("text") for block in result.get("content", ()) if block.get("type") == "text"
    ]
    if len(texts) != 1 or json.loads(texts[0]) != {"sum": total}:
        problems.append(f"text content {texts!r}")
    if problems:
        raise AssertionError(f"{who}: {'; '.join(problems)}")


def check_refusal(status: int, answer: Any, who: str) -> None:
    """Arguments outside the schema are refused (``isError`` or a JSON-RPC error)."""
    refused = isinstance(answer, dict) and (
        "error" in answer or bool((answer.get("result") or {}).get("isError"))
    )
    if not refused:
        raise AssertionError(f"{who}: invalid arguments were accepted (HTTP {status}): {answer}")
