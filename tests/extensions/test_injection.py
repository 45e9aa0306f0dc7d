"""Function tools: arguments vs injected parameters, the output contract, plain returns."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Annotated, Any

import pytest
from mcp import types
from pydantic import BaseModel, Field
from starlette.requests import Request

from container import Container
from mcp_adapter import (
    CompileError,
    McpExtension,
    McpRequest,
    McpResponse,
    Platform,
    ToolSpec,
    tool,
)
from mcp_adapter.compiled.catalog import Catalog
from tests.extensions.support import LEGACY, MODERN, host_call, host_tools

pytestmark = pytest.mark.anyio


class Clock:
    def now(self) -> str:
        return "noon"


class Greeter:
    """A service with a dependency: autowired by the container."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    def greet(self, name: str) -> str:
        return f"Good {self.clock.now()}, {name}"


class Repository:
    """An abstract-ish service that must be bound."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn


@dataclasses.dataclass
class Options:
    """A dataclass the container could autowire (every field has a default)."""

    verbose: bool = False


class Filters(BaseModel):
    tags: list[str] = []


def compile_one(handler: Any, container: Container | None = None, **spec: Any) -> Catalog:
    return (
        Platform().compile(container or Container(), None)
        if handler is None
        else _compile(
            ToolSpec(name=spec.pop("name", "t"), handler=handler, **spec), container or Container()
        )
    )


def _compile(spec: ToolSpec, container: Container) -> Catalog:
    class One(McpExtension):
        def tools(self) -> list[ToolSpec]:
            return [spec]

    return Platform([One()]).compile(container)


def problems_of(handler: Any, container: Container | None = None) -> str:
    with pytest.raises(CompileError) as caught:
        compile_one(handler, container)
    return str(caught.value)


# -- what is an argument and what is injected --------------------------------------------


async def test_services_and_the_request_are_injected_and_kept_out_of_the_schema() -> None:
    seen: dict[str, Any] = {}

    async def greet(name: str, greeter: Greeter, request: McpRequest, times: int = 1) -> str:
        seen["request"] = request
        return " / ".join([greeter.greet(name)] * times)

    catalog = compile_one(greet)
    schema = catalog.tools["t"].modern.input_schema
    assert set(schema["properties"]) == {"name", "times"}
    assert schema["required"] == ["name"]
    assert schema["properties"]["times"]["default"] == 1
    result = await host_call(Container(), catalog, "t", {"name": "Ada", "times": 2}, MODERN)
    assert result["structuredContent"] == "Good noon, Ada / Good noon, Ada"
    assert seen["request"].method == "tools/call"
    assert seen["request"].arguments == {"name": "Ada", "times": 2}


async def test_an_argument_never_replaces_an_injected_service() -> None:
    def greet(name: str, greeter: Greeter) -> str:
        return greeter.greet(name)

    catalog = compile_one(greet)
    result = await host_call(Container(), catalog, "t", {"name": "Ada", "greeter": "x"}, MODERN)
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("Invalid tool arguments")
    assert "greeter: Extra inputs are not permitted" in result["content"][0]["text"]


async def test_a_bound_service_is_injected_from_the_container_in_a_scope() -> None:
    closed: list[str] = []

    async def open_repository() -> AsyncIterator[Repository]:
        yield Repository("sqlite://")
        closed.append("repository")

    container = Container()
    container.scoped(Repository, open_repository)

    def where(repository: Repository) -> dict[str, str]:
        return {"dsn": repository.dsn}

    catalog = compile_one(where, container)
    assert catalog.tools["t"].modern.input_schema["properties"] == {}
    result = await host_call(container, catalog, "t", {}, LEGACY)
    assert result["structuredContent"] == {"dsn": "sqlite://"}
    assert closed == ["repository"]


async def test_the_http_request_is_injected_and_absent_over_other_transports() -> None:
    def agent(request: Request) -> str:
        return request.headers.get("user-agent", "")

    catalog = compile_one(agent)
    assert catalog.tools["t"].modern.input_schema["properties"] == {}
    result = await host_call(Container(), catalog, "t", {}, MODERN)
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("Tool execution failed")


def test_json_native_types_are_arguments_even_when_bound() -> None:
    container = Container()
    container.instance(str, "bound")

    def echo(text: str, count: int, tags: list[str] | None = None) -> str:
        return text

    schema = compile_one(echo, container).tools["t"].modern.input_schema
    assert set(schema["properties"]) == {"text", "count", "tags"}


def test_data_types_the_container_cannot_build_are_arguments() -> None:
    def search(filters: Filters, limit: int = 10) -> list[str]:
        return filters.tags[:limit]

    schema = compile_one(search).tools["t"].modern.input_schema
    assert set(schema["properties"]) == {"filters", "limit"}
    assert "$defs" in schema  # the nested model is described


def test_an_autowirable_data_type_is_ambiguous() -> None:
    def run(options: Options) -> str:
        return "ok"

    text = problems_of(run)
    assert "parameter options: " in text
    assert "is ambiguous" in text
    assert "Annotated[Options, Field()]" in text
    assert "container.scoped(Options)" in text


async def test_ambiguity_is_resolved_by_binding_or_by_marking_an_argument() -> None:
    def run(options: Options) -> bool:
        return options.verbose

    container = Container()
    container.instance(Options, Options(verbose=True))
    catalog = compile_one(run, container)
    assert catalog.tools["t"].modern.input_schema["properties"] == {}
    assert (await host_call(container, catalog, "t", {}, MODERN))["structuredContent"] is True

    def run_with(options: Annotated[Options, Field(description="How to run")]) -> bool:
        return options.verbose

    catalog = compile_one(run_with)
    schema = catalog.tools["t"].modern.input_schema
    assert schema["properties"]["options"]["description"] == "How to run"
    result = await host_call(Container(), catalog, "t", {"options": {"verbose": True}}, MODERN)
    assert result["structuredContent"] is True


def test_a_parameter_without_a_source_fails_compilation_with_both_reasons() -> None:
    def use(repository: Repository) -> str:
        return repository.dsn

    text = problems_of(use)  # the wording, path and hint a class tool's parameter gets
    assert "missing binding: no binding for str" in text
    assert "use(repository) -> Repository(dsn) -> ???" in text
    assert "hint: str is a builtin type; give the parameter a default or bind a value" in text


def test_a_parameter_without_a_source_but_with_a_default_keeps_its_default() -> None:
    fallback = Repository("memory://")

    def use(name: str, repository: Repository = fallback) -> str:
        return repository.dsn

    schema = compile_one(use).tools["t"].modern.input_schema
    assert set(schema["properties"]) == {"name"}


def test_an_unannotated_parameter_is_an_argument_of_any_type() -> None:
    def anything(value, other=3):  # type: ignore[no-untyped-def]
        return value

    schema = compile_one(anything).tools["t"].modern.input_schema
    assert schema["properties"]["value"] == {"title": "Value"}
    assert schema["properties"]["other"] == {"default": 3, "title": "Other"}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f(*args: int) -> str: ...", "handlers cannot accept *args or **kwargs"),
        ("def f(**kwargs: int) -> str: ...", "handlers cannot accept *args or **kwargs"),
        ("def f(_hidden: int) -> str: ...", "cannot be a tool argument name"),
        ("def f(a: int, /) -> str: ...", "positional-only"),
    ],
)
def test_signatures_that_cannot_be_called_by_name_fail(source: str, expected: str) -> None:
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    assert expected in problems_of(namespace["f"])


def test_every_problem_is_reported_at_once_with_the_tool_path() -> None:
    class Broken(McpExtension):
        @tool(name="bad name!")
        def one(self, options: Options) -> str:
            return ""

        @tool()
        def two(self, repository: Repository) -> str:
            return ""

    with pytest.raises(CompileError) as caught:
        Platform([Broken()]).compile(Container())
    text = str(caught.value)
    assert "invalid tool name 'bad name!'" in text
    assert "Broken.one(options)" in text
    assert "Broken.two(repository)" in text
    assert len(caught.value.problems) == 3


def test_argument_names_shadowing_pydantic_attributes_still_work() -> None:
    def f(json: str, copy: bool = False, schema: str = "") -> str:
        return json

    properties = compile_one(f).tools["t"].modern.input_schema["properties"]
    assert set(properties) == {"json", "copy", "schema"}


# -- the output contract and plain return values -----------------------------------------------


@pytest.mark.parametrize(
    ("returns", "schema"),
    [
        ("dict", {"additionalProperties": True, "type": "object"}),
        ("dict[str, int]", {"additionalProperties": {"type": "integer"}, "type": "object"}),
        ("str", {"type": "string"}),
        ("list[int]", {"items": {"type": "integer"}, "type": "array"}),
        ("dict | McpResponse", {"additionalProperties": True, "type": "object"}),
        ("McpResponse", None),
        ("list[McpResponse]", None),
        ("types.CallToolResult", None),
        ("types.TextContent", None),
        ("list[types.ContentBlock]", None),
        ("None", None),
        ("Any", None),
    ],
)
def test_the_return_annotation_is_the_output_contract(returns: str, schema: Any) -> None:
    namespace: dict[str, Any] = {"McpResponse": McpResponse, "types": types, "Any": Any}
    exec(f"def f() -> {returns}: ...", namespace)
    tool_ = compile_one(namespace["f"]).tools["t"]
    assert tool_.modern.output_schema == schema
    if schema is not None and schema["type"] != "object":
        assert tool_.legacy.output_schema == {
            "type": "object",
            "properties": {"result": schema},
            "required": ["result"],
        }


def test_a_return_annotation_pydantic_cannot_describe_fails_compilation() -> None:
    def f() -> Clock:
        return Clock()

    assert "cannot be an output contract" in problems_of(f)


async def test_plain_values_become_results_the_way_mcpserver_renders_them() -> None:
    image = types.ImageContent(type="image", data="AAAA", mime_type="image/png")

    class Plain(McpExtension):
        @tool()
        def text(self) -> str:
            return "plain"

        @tool()
        def blocks(self) -> list[types.ContentBlock]:
            return [types.TextContent(type="text", text="a"), image]

        @tool()
        def untyped(self):  # type: ignore[no-untyped-def]
            return ["x", {"n": 1}]

        @tool()
        def nothing(self) -> None:
            return None

        @tool()
        def response(self) -> McpResponse:
            return McpResponse.text("explicit")

        @tool()
        def refused(self) -> dict:
            return McpResponse.error("No such sandbox.")  # type: ignore[return-value]

    catalog = Platform([Plain()]).compile(Container())

    async def call(name: str, era: str = MODERN) -> dict[str, Any]:
        return await host_call(Container(), catalog, name, {}, era)

    assert (await call("text"))["content"] == [{"type": "text", "text": "plain"}]
    assert (await call("text"))["structuredContent"] == "plain"
    assert (await call("text", LEGACY))["structuredContent"] == {"result": "plain"}
    blocks = await call("blocks")
    assert blocks["content"][0] == {"type": "text", "text": "a"}
    assert blocks["content"][1]["type"] == "image"
    assert "structuredContent" not in blocks
    untyped = await call("untyped")
    assert untyped["content"] == [
        {"type": "text", "text": "x"},
        {"type": "text", "text": '{\n  "n": 1\n}'},
    ]
    assert "structuredContent" not in untyped
    assert (await call("nothing"))["content"] == []
    assert (await call("response"))["content"] == [{"type": "text", "text": "explicit"}]
    refused = await call("refused")
    assert refused["isError"] is True
    assert refused["content"] == [{"type": "text", "text": "No such sandbox."}]


async def test_a_value_violating_the_output_contract_is_an_execution_failure() -> None:
    def count() -> int:
        return "many"  # type: ignore[return-value]

    result = await host_call(Container(), compile_one(count), "t", {}, MODERN)
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("Tool execution failed (incident ")


async def test_sync_and_async_handlers_both_run() -> None:
    class Both(McpExtension):
        @tool()
        def sync(self, n: int) -> int:
            return n + 1

        @tool()
        async def asynchronous(self, n: int) -> int:
            return n + 2

        @tool()
        @staticmethod
        def static(n: int) -> int:
            return n + 3

    catalog = Platform([Both()]).compile(Container())
    for name, expected in (("sync", 2), ("asynchronous", 3), ("static", 4)):
        result = await host_call(Container(), catalog, name, {"n": 1}, MODERN)
        assert result["structuredContent"] == expected


async def test_listing_entries_in_both_eras() -> None:
    def f(name: str) -> str:
        """Say it."""
        return name

    catalog = compile_one(f)
    modern = await host_tools(Container(), catalog, MODERN)
    legacy = await host_tools(Container(), catalog, LEGACY)
    assert modern[0]["outputSchema"] == {"type": "string"}
    assert legacy[0]["outputSchema"]["properties"] == {"result": {"type": "string"}}
    assert modern[0]["description"] == legacy[0]["description"] == "Say it."
