"""The server the replica tests run N times behind haproxy.

It is the notifications tests' notes server (``touch`` announces a change; each
diary is visible to its owner only) with three more tools: ``where`` names the
replica that answered (``REPLICA`` in its environment), ``ask-twice`` asks two
questions in two rounds and says which replica served each round, and ``limited``
allows each caller three calls an hour, counted in the Redis of
``REPLICA_RATE_REDIS`` (a variable of these tests: ``--redis`` itself is taken out of
the environment before the server is imported).
"""

from __future__ import annotations

import os

from mcp_adapter import McpRequest, McpResponse, Server, Tool
from mcp_adapter.layers import RateLimit
from mcp_adapter.stores import InMemoryRateStore, RateStore, SharedRedis
from schemas import Schema
from tests.notifications.apps import Diary, PublicNote, TouchTool, Vault


def replica() -> str:
    return os.environ.get("REPLICA", "unnamed")


class Confirm(Schema):
    ok: bool


class WhereTool(Tool):
    name = "where"

    def handle(self) -> McpResponse:
        return McpResponse.text(replica())


class AskTwiceTool(Tool):
    """Round 1 asks, round 2 asks again, round 3 answers: each round notes its replica."""

    name = "ask-twice"

    async def handle(self, request: McpRequest) -> McpResponse:
        state = request.request_state
        if state is None:
            return McpResponse.elicit("First?", Confirm, key="first", state=replica())
        if "," not in state:
            rounds = f"{state},{replica()}"
            return McpResponse.elicit("Second?", Confirm, key="second", state=rounds)
        answer = request.input_responses.get("second", {}).get("action")
        return McpResponse.text(f"{answer} {state},{replica()}")


def rate_store() -> RateStore:
    url = os.environ.get("REPLICA_RATE_REDIS")
    if url is None:
        return InMemoryRateStore()
    return SharedRedis.of(url).for_server("replicas").rate_store()


class LimitedTool(Tool):
    name = "limited"
    middleware = (RateLimit(3, 3600.0, store=rate_store(), stage="call"),)

    def handle(self) -> McpResponse:
        return McpResponse.text(f"allowed on {replica()}")


class ReplicaServer(Server):
    name = "replicas"
    tools = (TouchTool, WhereTool, AskTwiceTool, LimitedTool)
    resources = (PublicNote, Diary, Vault)
