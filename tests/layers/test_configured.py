"""A layer named by its class in ``Server.middleware``: the container builds it when the
server compiles, so its settings come from the container (tests and deployments configure
it without subclassing), and each container gets its own (no counts shared between
catalogs of one process)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from container import Container
from mcp_adapter import CompileError, Identity, McpResponse, Server, Tool, compile_server
from mcp_adapter.extensions import Call, Next
from mcp_adapter.layers import AccessLog, RateLimit, ResponseLimit
from mcp_adapter.testing import McpTestClient
from tests.components.support import ERAS

pytestmark = pytest.mark.anyio

ADA = Identity("ada", "web")


@dataclass(frozen=True)
class Limits:
    """The deployment's settings."""

    calls: int = 3
    max_bytes: int = 10_000


def rate_limit(limits: Limits) -> RateLimit:
    return RateLimit(limits.calls, 60.0)


def response_limit(limits: Limits) -> ResponseLimit:
    return ResponseLimit(limits.max_bytes)


class Ping(Tool):
    async def handle(self) -> McpResponse:
        return McpResponse.text("pong")


class Limited(Server):
    name = "limited"
    tools = (Ping,)
    middleware: ClassVar = (AccessLog, RateLimit, ResponseLimit)


def configured(limits: Limits | None = None) -> Container:
    container = Container()
    if limits is not None:
        container.instance(Limits, limits)
    container.singleton(RateLimit, rate_limit)
    container.singleton(ResponseLimit, response_limit)
    return container


async def calls_allowed(client: McpTestClient, tries: int = 6) -> int:
    allowed = 0
    for _ in range(tries):
        allowed += not (await client.tool("ping")).is_error
    return allowed


@pytest.mark.parametrize("era", ERAS)
async def test_the_settings_come_from_the_container_and_each_container_counts_apart(
    era: str,
) -> None:
    first, second = configured(Limits(calls=2)), configured()  # the second: the defaults
    assert await calls_allowed(McpTestClient(first, Limited, protocol=era, identity=ADA)) == 2
    assert await calls_allowed(McpTestClient(second, Limited, protocol=era, identity=ADA)) == 3
    stages = [layer.stage for layer in compile_server(Limited, first).request_layers]
    assert stages == ["request", "request", "request"]


@pytest.mark.parametrize("era", ERAS)
async def test_a_test_overrides_the_settings_without_subclassing(era: str) -> None:
    container = configured(Limits(calls=5))
    with container.override(Limits, Limits(calls=1)):
        strict = McpTestClient(container, Limited, protocol=era, identity=ADA)
        assert await calls_allowed(strict) == 1
    relaxed = McpTestClient(container, Limited, protocol=era, identity=ADA)
    assert await calls_allowed(relaxed) == 5


def test_an_unbound_built_in_layer_is_a_problem_saying_how_to_bind_it() -> None:
    with pytest.raises(CompileError) as raised:
        compile_server(Limited, Container())
    problems = {problem.path: problem for problem in raised.value.problems}
    found = problems[("middleware of server Limited", "RateLimit(calls)")]
    assert "no binding for int" in found.message
    assert "container.singleton(RateLimit, rate_limit)" in found.hint
    assert ("middleware of server Limited", "ResponseLimit(max_bytes)") in problems
    assert len(raised.value.problems) == 2  # AccessLog builds with its defaults


class PerCall:
    """A service of the call's scope."""


class Stamp:
    """A layer class of the user's, configured by constructor injection."""

    stage = "request"

    def __init__(self, limits: Limits) -> None:
        self.limits = limits

    async def __call__(self, call: Call, call_next: Next) -> Any:
        answer = await call_next(call)
        return answer.model_copy(update={"meta": {"limit": self.limits.calls}})


class NeedsCall:
    def __init__(self, per_call: PerCall) -> None:
        self.per_call = per_call

    async def __call__(self, call: Call, call_next: Next) -> Any:
        return await call_next(call)


def failing_factory() -> RateLimit:
    return RateLimit(0)


def server_of(*layers: Any) -> type[Server]:
    class Layered(Server):
        name = "layered"
        tools = (Ping,)
        middleware: ClassVar = layers

    return Layered


@pytest.mark.parametrize("era", ERAS)
async def test_a_users_layer_class_gets_its_settings_injected(era: str) -> None:
    container = configured(Limits(calls=7))
    answer = await McpTestClient(container, server_of(Stamp), protocol=era).tool("ping")
    assert answer.assertOk().result is not None
    assert answer.result["_meta"]["limit"] == 7


@pytest.mark.parametrize(
    ("bind", "message"),
    [
        (
            lambda c: c.scoped(PerCall),
            "NeedsCall lives in a request \\(via NeedsCall -> PerCall\\)",
        ),
        (lambda c: c.singleton(RateLimit, failing_factory), "building RateLimit failed"),
    ],
)
def test_a_layer_the_container_cannot_build_once_is_a_compile_problem(
    bind: Callable[[Container], Any], message: str
) -> None:
    container = Container()
    bind(container)
    layer = NeedsCall if "PerCall" in message else RateLimit
    with pytest.raises(CompileError, match=message):
        compile_server(server_of(layer), container)
