"""Freshness hints (SEP-2549): ``ttlMs``/``cacheScope`` on listings and reads in 2026-07-28,
per component (``cache``) and server-wide (``Server.cache_hints``); never public for what
depends on who asks."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.server.caching import CacheHint

from container import Container
from mcp_adapter import (
    CompileError,
    McpRequest,
    McpResponse,
    Prompt,
    Resource,
    Server,
    Tool,
    compile_server,
)
from mcp_adapter.testing import McpTestClient

pytestmark = pytest.mark.anyio

HOUR = CacheHint(ttl_ms=3_600_000, scope="public")
MINUTE = CacheHint(ttl_ms=60_000, scope="public")


class Plain(Tool):
    name = "plain"

    async def handle(self) -> McpResponse:
        return McpResponse.text("plain")


class Slow(Tool):
    name = "slow"
    cache = HOUR

    async def handle(self) -> McpResponse:
        return McpResponse.text("slow")


class Staff(Tool):
    """Listed for signed-in callers only: the listing depends on who asks."""

    name = "staff"
    cache = HOUR

    def shouldRegister(self, request: McpRequest) -> bool:
        return request.identity is not None

    async def handle(self) -> McpResponse:
        return McpResponse.text("staff")


class Readme(Resource):
    uri = "docs://readme"
    cache = HOUR

    def handle(self) -> McpResponse:
        return McpResponse.text("read me")


class Page(Resource):
    uri_template = "docs://pages/{number}"
    cache = MINUTE

    def handle(self, number: str) -> McpResponse:
        return McpResponse.text(f"page {number}")


class Private(Resource):
    uri = "docs://private"
    cache = HOUR

    def authorize(self, request: McpRequest) -> bool:
        return True

    def handle(self) -> McpResponse:
        return McpResponse.text("mine")


class Changelog(Resource):
    uri = "docs://changelog"

    def handle(self) -> McpResponse:
        return McpResponse.text("changes")


class Hello(Prompt):
    cache = MINUTE

    def handle(self) -> McpResponse:
        return McpResponse.text("hello").asUser()


def hints(result: dict[str, Any]) -> tuple[Any, Any]:
    return result.get("ttlMs"), result.get("cacheScope")


async def listed(server: type[Server], method: str, era: str = "2026-07-28") -> dict[str, Any]:
    client = McpTestClient(Container(), server, protocol=era)  # type: ignore[arg-type]
    return (await client.request(method, {})).assertOk().result


async def read(server: type[Server], uri: str) -> dict[str, Any]:
    return (await McpTestClient(Container(), server).read_resource(uri)).assertOk().result


async def test_without_hints_results_are_immediately_stale_and_private() -> None:
    class Bare(Server):
        tools = (Plain,)
        resources = (Changelog,)

    assert hints(await listed(Bare, "tools/list")) == (0, "private")
    assert hints(await listed(Bare, "resources/list")) == (0, "private")
    assert hints(await read(Bare, "docs://changelog")) == (0, "private")


async def test_server_wide_hints_fill_what_components_leave_unset() -> None:
    class Shared(Server):
        tools = (Plain,)
        resources = (Changelog,)
        cache_hints = {"tools/list": MINUTE, "resources/read": HOUR}  # noqa: RUF012

    assert hints(await listed(Shared, "tools/list")) == (60_000, "public")
    assert hints(await read(Shared, "docs://changelog")) == (3_600_000, "public")
    assert hints(await listed(Shared, "resources/list")) == (0, "private")


async def test_a_read_carries_its_resources_own_hint_templates_too() -> None:
    class Docs(Server):
        resources = (Readme, Page, Changelog)
        cache_hints = {"resources/read": CacheHint(ttl_ms=5)}  # noqa: RUF012

    assert hints(await read(Docs, "docs://readme")) == (3_600_000, "public")
    assert hints(await read(Docs, "docs://pages/2")) == (60_000, "public")
    assert hints(await read(Docs, "docs://changelog")) == (5, "private")


async def test_a_page_is_as_fresh_as_its_least_fresh_entry() -> None:
    class AllHinted(Server):
        tools = (Slow,)
        resources = (Readme,)
        prompts = (Hello,)

    assert hints(await listed(AllHinted, "tools/list")) == (3_600_000, "public")
    assert hints(await listed(AllHinted, "prompts/list")) == (60_000, "public")

    class Mixed(Server):
        tools = (Slow, Plain)
        cache_hints = {"tools/list": MINUTE}  # noqa: RUF012

    # Plain declares nothing: the server's minute applies to it
    assert hints(await listed(Mixed, "tools/list")) == (60_000, "public")

    class Unhinted(Server):
        tools = (Slow, Plain)

    # Plain declares nothing and neither does the server: immediately stale
    assert hints(await listed(Unhinted, "tools/list")) == (0, "private")


async def test_what_depends_on_who_asks_is_never_public() -> None:
    class Personal(Server):
        tools = (Slow, Staff)
        resources = (Private, Readme)
        cache_hints = {"resources/list": HOUR}  # noqa: RUF012

    assert hints(await listed(Personal, "tools/list")) == (3_600_000, "private")
    assert hints(await listed(Personal, "resources/list")) == (3_600_000, "private")
    assert hints(await read(Personal, "docs://private")) == (3_600_000, "private")
    assert hints(await read(Personal, "docs://readme")) == (3_600_000, "public")


async def test_2025_results_carry_no_hints() -> None:
    class Docs(Server):
        tools = (Slow,)
        resources = (Readme,)

    assert hints(await listed(Docs, "tools/list", "2025-11-25")) == (None, None)
    client = McpTestClient(Container(), Docs, protocol="2025-11-25")
    result = (await client.read_resource("docs://readme")).assertOk().result
    assert hints(result) == (None, None)


def test_a_cache_that_is_no_cache_hint_fails_compilation_with_a_hint() -> None:
    class Old(Tool):
        name = "old"
        cache = {"ttl_seconds": 60}  # type: ignore[assignment]  # noqa: RUF012

        async def handle(self) -> McpResponse:
            return McpResponse.text("old")

    class OldServer(Server):
        tools = (Old,)
        cache_hints = {"tools/call": MINUTE}  # noqa: RUF012

    with pytest.raises(CompileError) as raised:
        compile_server(OldServer, Container())
    text = str(raised.value)
    assert "cache must be a CacheHint, not {'ttl_seconds': 60}" in text
    assert "cache = CacheHint(ttl_ms=60_000, scope='public')" in text
    assert "cache_hints keys must be cacheable methods" in text
