"""Two ``mcp-adapter serve --redis`` processes sharing a real ``redis-server`` (and a
request-state key): a round answered through one is refused by both, 2026-07-28 over
HTTP. Each answered round is one Redis key named by a digest, never by what the client
sent, and it expires with the state.

Skipped with the reason when ``redis-server`` is missing, failed instead with ``CI=true``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
import redis
from mcp import types

from tests.reliability.fuzz import MODERN, envelope
from tests.reliability.transports import decoded, http_headers
from tests.replicas.cluster import KEY_1, Redis
from tests.serving.harness import serve_http

ASK = ["tests.serving.asking:AskServer", "--request-state-key", KEY_1]
YES = {"action": "accept", "content": {"ok": True}}
INVALID = {
    "code": types.INVALID_PARAMS,
    "message": "Invalid or expired requestState",
    "data": {"reason": "invalid_request_state"},
}


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Redis]:
    server = Redis(Path(tmp_path_factory.mktemp("redis")))
    server.start()
    try:
        yield server
    finally:
        server.stop()


def call(url: str, params: dict[str, Any]) -> dict[str, Any]:
    meta = envelope({"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}})
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**params, "_meta": meta}}
    )
    answer = decoded(httpx2.post(url, content=body, headers=http_headers(body, MODERN), timeout=30))
    assert answer is not None
    return answer


def retry_of(tool: str, first: dict[str, Any]) -> dict[str, Any]:
    """The retry of ``first`` (a call asking for input) bringing every answer back."""
    return {
        "name": tool,
        "arguments": {},
        "inputResponses": dict.fromkeys(first["inputRequests"], YES),
        "requestState": first["requestState"],
    }


@pytest.mark.parametrize(("tool", "done"), [("ask", "accept asked"), ("ask_resolved", "ok=True")])
def test_a_round_answered_on_one_replica_is_refused_on_every_replica(
    shared: Redis, tool: str, done: str
) -> None:
    args = [*ASK, "--redis", shared.url]
    with serve_http(args) as one, serve_http(args) as two:
        retry = retry_of(tool, call(one.url, {"name": tool, "arguments": {}})["result"])
        assert call(two.url, retry)["result"]["content"][0]["text"] == done
        assert call(one.url, retry)["error"] == INVALID
        assert call(two.url, retry)["error"] == INVALID
        # a fresh call asks afresh, and its own retry is taken (on either replica)
        fresh = call(two.url, {"name": tool, "arguments": {}})["result"]
        retry["requestState"] = fresh["requestState"]
        assert call(one.url, retry)["result"]["content"][0]["text"] == done


def test_each_answered_round_is_one_key_named_by_a_digest_and_expiring(shared: Redis) -> None:
    client = redis.Redis.from_url(shared.url)
    client.flushdb()
    with serve_http([*ASK, "--redis", shared.url]) as served:
        first = call(served.url, {"name": "ask", "arguments": {}})["result"]
        assert "result" in call(served.url, retry_of("ask", first))
    keys = [key.decode() for key in client.scan_iter("*:rounds:*")]
    assert len(keys) == 1, keys
    prefix, _, name = keys[0].rpartition(":")
    assert prefix == "mcp_adapter:asking:rounds"
    assert len(name) == 22  # a digest of the round's id (16 bytes, base64url)
    assert name not in first["requestState"]
    ttl = client.pttl(keys[0])
    assert 0 < ttl <= (600 + 60) * 1000  # the state's lifetime left, and a minute
    client.close()


def test_a_round_no_replica_confirms_is_refused_and_not_spent(shared: Redis) -> None:
    """``--redis-wait-replicas 1`` on a Redis without replicas: the retry is answered
    ``-32603`` (no traceback), its record taken back, so the same state is taken once by
    a replica that asks no replica to confirm."""
    client = redis.Redis.from_url(shared.url)
    client.flushdb()
    fenced = [*ASK, "--redis", shared.url, "--redis-wait-replicas", "1"]
    with serve_http(fenced) as one, serve_http([*ASK, "--redis", shared.url]) as two:
        retry = retry_of("ask", call(one.url, {"name": "ask", "arguments": {}})["result"])
        error = call(one.url, retry)["error"]
        assert error["code"] == types.INTERNAL_ERROR
        assert error["message"].startswith("The answers could not be taken; call again later")
        assert "Traceback" not in json.dumps(error)
        assert list(client.scan_iter("*:rounds:*")) == []
        assert call(two.url, retry)["result"]["content"][0]["text"] == "accept asked"
        assert call(two.url, retry)["error"] == INVALID
    client.close()
