"""Cursor pagination of every listing, and listings that do no schema work per request."""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any

import pytest
from mcp import types
from pydantic.json_schema import GenerateJsonSchema

from container import Container
from mcp_adapter import (
    Catalog,
    McpRequest,
    McpResponse,
    Prompt,
    Resource,
    Server,
    Tool,
    compile_server,
)
from mcp_adapter.dispatch import Dispatcher
from mcp_adapter.testing import McpTestClient
from schemas import Contract, Schema
from tests.components.support import ERAS, MODERN, SDK_MODES, sdk_client

pytestmark = pytest.mark.anyio


class Query(Schema):
    text: str
    limit: int = 10


class Answer(Schema):
    hits: list[str]


class QueryTool(Tool[Query, Answer]):
    """Base of the generated tools: an input and an output contract each."""

    async def handle(self, payload: Query) -> McpResponse:
        return McpResponse.structured({"hits": [payload.text]})


class HiddenEveryThird(QueryTool):
    def shouldRegister(self, request: McpRequest, counter: HookCounter) -> bool:
        counter.calls += 1
        return int(type(self).__name__.removeprefix("H")) % 3 != 0


class HookCounter:
    def __init__(self) -> None:
        self.calls = 0


def tools(count: int, base: type[Tool[Any, Any]] = QueryTool, prefix: str = "T") -> type[Server]:
    generated = tuple(
        type(f"{prefix}{i}", (base,), {"name": f"tool-{i:04d}"}) for i in range(count)
    )
    return type("Many", (Server,), {"tools": generated})


def many(kind: str, count: int) -> type[Server]:
    if kind == "tools":
        return tools(count)
    if kind == "resources":

        def read(self: Any) -> McpResponse:
            return McpResponse.text("r")

        made = tuple(
            type(f"R{i}", (Resource,), {"name": f"r{i:04d}", "uri": f"res://{i}", "handle": read})
            for i in range(count)
        )
        return type("Many", (Server,), {"resources": made})
    if kind == "resourceTemplates":

        def read_item(self: Any, id: str) -> McpResponse:
            return McpResponse.text(id)

        made = tuple(
            type(
                f"Tm{i}",
                (Resource,),
                {"name": f"t{i:04d}", "uri_template": f"res{i}://{{id}}", "handle": read_item},
            )
            for i in range(count)
        )
        return type("Many", (Server,), {"resources": made})

    def get(self: Any) -> McpResponse:
        return McpResponse.text("p")

    made = tuple(
        type(f"P{i}", (Prompt,), {"name": f"p{i:04d}", "handle": get}) for i in range(count)
    )
    return type("Many", (Server,), {"prompts": made})


@functools.cache
def many_catalog(kind: str, count: int) -> Catalog:
    """Compiled once per module: 250 templates cost a quadratic overlap check."""
    return compile_server(many(kind, count), Container())


LIST_METHOD = {
    "tools": "tools/list",
    "resources": "resources/list",
    "resourceTemplates": "resources/templates/list",
    "prompts": "prompts/list",
}


async def pages(client: McpTestClient, method: str, field: str) -> list[list[str]]:
    """Every page's names, following nextCursor to the end."""
    found: list[list[str]] = []
    params: dict[str, Any] = {}
    while True:
        result = (await client.request(method, params)).assertOk().result
        assert result is not None
        found.append([entry["name"] for entry in result[field]])
        cursor = result.get("nextCursor")
        if cursor is None:
            return found
        assert isinstance(cursor, str)
        params = {"cursor": cursor}
        assert len(found) < 10, "the cursors never end"


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("kind", list(LIST_METHOD))
async def test_250_entries_come_in_pages_of_100(era: str, kind: str) -> None:
    client = McpTestClient(Container(), many_catalog(kind, 250), protocol=era)
    found = await pages(client, LIST_METHOD[kind], kind)
    assert [len(page) for page in found] == [100, 100, 50]
    names = [name for page in found for name in page]
    assert len(set(names)) == 250
    assert names == sorted(names)


@pytest.mark.parametrize("era", ERAS)
async def test_a_small_catalog_is_one_page_without_a_cursor(era: str) -> None:
    result = (await McpTestClient(Container(), tools(100), protocol=era).list_tools()).result
    assert result is not None
    assert len(result["tools"]) == 100
    assert "nextCursor" not in result


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("kind", list(LIST_METHOD))
@pytest.mark.parametrize(
    "cursor",
    [
        "bogus",
        "3",
        "-1",
        "1.0",
        "",
        "99999999999999999999",
        pytest.param("\u00b2", id="superscript-two"),  # isdigit() but not int()-able
    ],
)
async def test_an_invalid_cursor_is_invalid_params(era: str, kind: str, cursor: str) -> None:
    client = McpTestClient(Container(), many_catalog(kind, 250), protocol=era)
    result = await client.request(LIST_METHOD[kind], {"cursor": cursor})
    assert result.error is not None, result.message
    assert result.error["code"] == types.INVALID_PARAMS


@pytest.mark.parametrize("era", ERAS)
async def test_hooks_filter_each_page_and_the_cursors_still_lead_to_the_end(era: str) -> None:
    container = Container()
    counter = HookCounter()
    container.instance(HookCounter, counter)
    client = McpTestClient(container, tools(250, HiddenEveryThird, "H"), protocol=era)
    found = await pages(client, "tools/list", "tools")
    assert len(found) == 3
    names = [name for page in found for name in page]
    assert names == [f"tool-{i:04d}" for i in range(250) if i % 3 != 0]
    assert counter.calls == 250


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_the_sdk_client_follows_the_cursors(mode: str) -> None:
    async with sdk_client(tools(250), Container(), mode) as sdk:
        names: list[str] = []
        cursor: str | None = None
        for _ in range(3):
            page = await sdk.list_tools(cursor=cursor)
            names += [tool.name for tool in page.tools]
            cursor = page.next_cursor
        assert cursor is None
        assert len(names) == 250
        result = await sdk.call_tool("tool-0249", {"text": "x"})
        assert result.structured_content == {"hits": ["x"]}


# -- no schema work per listing ------------------------------------------------------------------


class SchemaWork:
    """Counts every JSON Schema pydantic generates and every contract built."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[str] = []
        generate = GenerateJsonSchema.generate
        of = Contract.of

        def counted_generate(self: GenerateJsonSchema, *args: Any, **kwargs: Any) -> Any:
            work.calls.append("GenerateJsonSchema.generate")
            return generate(self, *args, **kwargs)

        def counted_of(tp: Any) -> Any:
            work.calls.append("Contract.of")
            return of(tp)

        work = self
        monkeypatch.setattr(GenerateJsonSchema, "generate", counted_generate)
        monkeypatch.setattr(Contract, "of", staticmethod(counted_of))


class Fresh(Schema):
    """Used by one test only, so its schema is never cached before it."""

    anything: str


class FreshTool(Tool[Fresh]):
    async def handle(self, payload: Fresh) -> McpResponse:
        return McpResponse.text(payload.anything)


def test_the_counter_sees_schema_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """The instrument below can fail: compiling a server is schema work it counts."""
    work = SchemaWork(monkeypatch)
    compile_server(type("One", (Server,), {"tools": (FreshTool,)}), Container())
    assert "Contract.of" in work.calls
    assert "GenerateJsonSchema.generate" in work.calls


@functools.cache
def thousand(hooks: bool) -> tuple[Container, HookCounter, Catalog]:
    """1,000 tools (a third hidden by a hook when ``hooks``), compiled once per module."""
    container = Container()
    counter = HookCounter()
    container.instance(HookCounter, counter)
    server = tools(1000, HiddenEveryThird, "H") if hooks else tools(1000)
    return container, counter, compile_server(server, container)


@pytest.mark.parametrize("mode", SDK_MODES)
@pytest.mark.parametrize("hooks", [False, True], ids=["no-hooks", "hooks"])
async def test_listing_1000_tools_does_no_schema_work(
    mode: str, hooks: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    container, counter, catalog = thousand(hooks)
    counter.calls = 0
    async with sdk_client(catalog, container, mode) as sdk:
        work = SchemaWork(monkeypatch)
        for _ in range(2):
            cursor: str | None = None
            listed = 0
            for _ in range(10):
                page = await sdk.list_tools(cursor=cursor)
                listed += len(page.tools)
                cursor = page.next_cursor
            assert cursor is None
            assert listed == (666 if hooks else 1000)
    assert work.calls == []
    assert counter.calls == (2000 if hooks else 0)


@pytest.mark.parametrize("modern", [True, False], ids=["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize("hooks", [False, True], ids=["no-hooks", "hooks"])
async def test_listings_hand_out_the_precompiled_tool_objects(modern: bool, hooks: bool) -> None:
    container, _, catalog = thousand(hooks)
    dispatcher = Dispatcher(catalog, container)
    ctx = SimpleNamespace(protocol_version=MODERN if modern else "2025-11-25", method="tools/list")
    precompiled = {
        name: (tool.modern if modern else tool.legacy) for name, tool in catalog.tools.items()
    }
    for _ in range(2):
        cursor: str | None = None
        for _ in range(10):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await dispatcher.list_tools(ctx, params)
            for tool in page.tools:
                assert tool is precompiled[tool.name]
            cursor = page.next_cursor
            if cursor is None:
                break
        assert cursor is None
