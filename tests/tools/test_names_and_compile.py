"""Tool names and ``compile_server``: every problem of a declaration, reported at once."""

from __future__ import annotations

from typing import Any, Protocol

import pytest

from container import Container, ProblemKind
from mcp_adapter import CompileError, McpResponse, Server, Tool, compile_server
from schemas import Schema
from tests.tools.drivers import Driver

pytestmark = pytest.mark.anyio


# -- default and explicit names -------------------------------------------------------------


class FindTicketTool(Tool):
    async def handle(self) -> McpResponse:
        return McpResponse.text("find-ticket")


class HTTPStatusTool(Tool):
    async def handle(self) -> McpResponse:
        return McpResponse.text("http-status")


class Lookup(Tool):
    """No ``Tool`` suffix to drop."""

    async def handle(self) -> McpResponse:
        return McpResponse.text("lookup")


class ExplicitTool(Tool):
    name = "support.find_ticket-v2"

    async def handle(self) -> McpResponse:
        return McpResponse.text("explicit")


class DerivedFromExplicitTool(ExplicitTool):
    """A subclass does not inherit its parent's explicit name."""


class LongNameTool(Tool):
    name = "n" * 128

    async def handle(self) -> McpResponse:
        return McpResponse.text("long")


class NamesServer(Server):
    tools = (
        FindTicketTool,
        HTTPStatusTool,
        Lookup,
        ExplicitTool,
        DerivedFromExplicitTool,
        LongNameTool,
    )


def test_names_are_derived_in_kebab_case_unless_explicit() -> None:
    catalog = compile_server(NamesServer, Container())
    assert list(catalog.tools) == [
        "find-ticket",
        "http-status",
        "lookup",
        "support.find_ticket-v2",
        "derived-from-explicit",
        "n" * 128,
    ]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("find-ticket", "find-ticket"),
        ("support.find_ticket-v2", "explicit"),
        ("derived-from-explicit", "explicit"),
        ("n" * 128, "long"),
    ],
)
async def test_tools_are_listed_and_called_by_their_names(
    driver: Driver, name: str, text: str
) -> None:
    listed = [tool["name"] for tool in await driver.list_tools(Container(), NamesServer)]
    assert name in listed
    result = await driver.call(Container(), NamesServer, name, {})
    result.assertOk()
    assert result.texts == [text]


async def test_the_class_name_is_not_a_tool_name(driver: Driver) -> None:
    result = await driver.call(Container(), NamesServer, "FindTicketTool", {})
    result.assertError("Unknown tool")


@pytest.mark.parametrize(
    "bad",
    ["has space", "slash/name", "ünïcode", "n" * 129, "semi;colon", "tab\tname"],
    ids=["space", "slash", "unicode", "too-long", "semicolon", "tab"],
)
def test_an_invalid_explicit_name_fails_compilation(bad: str) -> None:
    tool = type("BadNameTool", (Tool,), {"name": bad, "handle": FindTicketTool.handle})
    server = type("BadNameServer", (Server,), {"tools": (tool,)})
    with pytest.raises(CompileError) as caught:
        compile_server(server, Container())
    (problem,) = caught.value.problems
    assert problem.path == ("BadNameTool",)
    assert repr(bad) in problem.message
    assert "[A-Za-z0-9_.-]{1,128}" in problem.hint


def test_a_derived_name_outside_the_alphabet_fails_compilation() -> None:
    class ÜberTool(Tool):
        async def handle(self) -> McpResponse:
            return McpResponse.text("x")

    class UnicodeServer(Server):
        tools = (ÜberTool,)

    with pytest.raises(CompileError, match="invalid name 'über'"):
        compile_server(UnicodeServer, Container())


class FirstTool(Tool):
    name = "same"

    async def handle(self) -> McpResponse:
        return McpResponse.text("1")


class SecondTool(Tool):
    name = "same"

    async def handle(self) -> McpResponse:
        return McpResponse.text("2")


class Same(Tool):
    """Its derived name, ``same``, collides with the explicit ones."""

    async def handle(self) -> McpResponse:
        return McpResponse.text("3")


@pytest.mark.parametrize(
    ("tools", "duplicates"),
    [
        ((FirstTool, SecondTool), ["SecondTool"]),
        ((FirstTool, Same), ["Same"]),
        ((FirstTool, FirstTool), ["FirstTool"]),
        ((FirstTool, SecondTool, Same), ["SecondTool", "Same"]),
    ],
    ids=["explicit-explicit", "explicit-derived", "listed-twice", "three-ways"],
)
def test_duplicate_names_fail_compilation(
    tools: tuple[type[Tool[Any, Any]], ...], duplicates: list[str]
) -> None:
    server = type("DuplicateServer", (Server,), {"tools": tools})
    with pytest.raises(CompileError) as caught:
        compile_server(server, Container())
    problems = caught.value.problems
    assert [p.path for p in problems] == [(d,) for d in duplicates]
    assert all("duplicate tool name 'same'" in p.message for p in problems)


def test_something_that_is_not_a_tool_class_fails_compilation() -> None:
    class NotATool:
        async def handle(self) -> McpResponse:
            return McpResponse.text("x")

    server = type("OddServer", (Server,), {"tools": (NotATool, FindTicketTool())})
    with pytest.raises(CompileError) as caught:
        compile_server(server, Container())
    assert len(caught.value.problems) == 2
    assert all("is not a Tool class" in p.message for p in caught.value.problems)


# -- every problem at once ------------------------------------------------------------------


class Clock(Protocol):
    def now(self) -> float: ...


class NameFormatter:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock


class GreetInput(Schema):
    name: str


class NotAContract:
    """A plain class pydantic cannot describe."""

    def __init__(self, anything: object) -> None:
        self.anything = anything


class GreetTool(Tool[GreetInput, str]):
    name = "greet"

    async def handle(self, payload: GreetInput, names: NameFormatter) -> McpResponse:
        return McpResponse.structured(payload.name)


class StarArgsTool(Tool[GreetInput]):
    async def handle(self, payload: GreetInput, *extras: str) -> McpResponse:
        return McpResponse.text("x")


class StarKwargsTool(Tool[GreetInput]):
    async def handle(self, payload: GreetInput, **options: str) -> McpResponse:
        return McpResponse.text("x")


class NoSourceTool(Tool[GreetInput]):
    async def handle(self, payload: GreetInput, limit: int) -> McpResponse:
        return McpResponse.text("x")


class UnannotatedTool(Tool[GreetInput]):
    async def handle(self, payload: GreetInput, mystery) -> McpResponse:  # type: ignore[no-untyped-def]
        return McpResponse.text("x")


class BadInputTool(Tool[NotAContract]):
    async def handle(self, payload: NotAContract) -> McpResponse:
        return McpResponse.text("x")


class ScalarInputTool(Tool[int]):
    async def handle(self, payload: int) -> McpResponse:
        return McpResponse.text("x")


class BadOutputTool(Tool[GreetInput, NotAContract]):
    async def handle(self, payload: GreetInput) -> McpResponse:
        return McpResponse.text("x")


class UnbuildableTool(Tool):
    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    async def handle(self) -> McpResponse:
        return McpResponse.text("x")


class NoHandleTool(Tool):
    pass


class FineTool(Tool):
    async def handle(self) -> McpResponse:
        return McpResponse.text("fine")


class BrokenServer(Server):
    name = "broken"
    tools = (
        GreetTool,
        StarArgsTool,
        StarKwargsTool,
        NoSourceTool,
        UnannotatedTool,
        BadInputTool,
        ScalarInputTool,
        BadOutputTool,
        UnbuildableTool,
        NoHandleTool,
        FineTool,
        FirstTool,
        SecondTool,
    )


@pytest.fixture
def broken() -> CompileError:
    with pytest.raises(CompileError) as caught:
        compile_server(BrokenServer, Container())
    return caught.value


def test_compile_reports_every_problem_in_one_error(broken: CompileError) -> None:
    rendered = str(broken)
    assert rendered.startswith("Cannot compile broken: 11 problems")
    owners = [problem.path[0].split(".")[0].split("(")[0] for problem in broken.problems]
    assert owners == [
        "GreetTool",
        "StarArgsTool",
        "StarKwargsTool",
        "NoSourceTool",
        "UnannotatedTool",
        "BadInputTool",
        "ScalarInputTool",
        "BadOutputTool",
        "UnbuildableTool",
        "NoHandleTool",
        "SecondTool",
    ]
    assert "FineTool" not in rendered
    for problem in broken.problems:
        assert problem.render() in rendered


def _problem(error: CompileError, owner: str) -> list[Any]:
    return [p for p in error.problems if p.path[0].startswith(owner)]


def test_an_unbuildable_handle_service_shows_its_dependency_path(broken: CompileError) -> None:
    (problem,) = _problem(broken, "GreetTool")
    assert problem.kind is ProblemKind.MISSING
    assert problem.path == ("GreetTool.handle(names)", "NameFormatter(clock)")
    assert "GreetTool.handle(names) -> NameFormatter(clock) -> ???" in str(broken)
    assert "Clock" in problem.message


def test_an_unbuildable_constructor_service_shows_its_dependency_path(
    broken: CompileError,
) -> None:
    (problem,) = _problem(broken, "UnbuildableTool")
    assert problem.kind is ProblemKind.MISSING
    assert problem.path == ("UnbuildableTool(clock)",)
    assert "UnbuildableTool(clock) -> ???" in str(broken)


@pytest.mark.parametrize(
    ("owner", "path", "says"),
    [
        ("StarArgsTool", "StarArgsTool.handle(extras)", "cannot accept *args or **kwargs"),
        ("StarKwargsTool", "StarKwargsTool.handle(options)", "cannot accept *args or **kwargs"),
        ("NoSourceTool", "NoSourceTool.handle(limit)", "has no valid source"),
        ("UnannotatedTool", "UnannotatedTool.handle(mystery)", "no annotation and no default"),
        ("BadInputTool", "BadInputTool", "input contract is not valid"),
        ("ScalarInputTool", "ScalarInputTool", "does not describe a JSON object"),
        ("BadOutputTool", "BadOutputTool", "output contract is not valid"),
        ("NoHandleTool", "NoHandleTool", "has no handle() method"),
    ],
)
def test_each_signature_or_contract_problem_is_named(
    broken: CompileError, owner: str, path: str, says: str
) -> None:
    (problem,) = _problem(broken, owner)
    assert problem.path[0] == path
    assert says in problem.message
    assert path in str(broken)


def test_the_duplicate_is_reported_alongside_the_other_problems(broken: CompileError) -> None:
    (problem,) = _problem(broken, "SecondTool")
    assert "duplicate tool name 'same', also used by FirstTool" in problem.message


def test_a_kwargs_parameter_is_named_with_two_stars(broken: CompileError) -> None:
    (problem,) = _problem(broken, "StarKwargsTool")
    assert "**options" in problem.message


def test_a_default_gives_a_parameter_a_source() -> None:
    class LimitTool(Tool[GreetInput]):
        async def handle(self, payload: GreetInput, limit: int = 10) -> McpResponse:
            return McpResponse.text(str(limit))

    class LimitServer(Server):
        tools = (LimitTool,)

    catalog = compile_server(LimitServer, Container())
    schema = catalog.tools["limit"].modern.input_schema
    assert set(schema["properties"]) == {"name"}


def test_binding_the_missing_service_makes_the_server_compile() -> None:
    class SystemClock:
        def now(self) -> float:
            return 0.0

    class GreetOnly(Server):
        tools = (GreetTool,)

    with pytest.raises(CompileError):
        compile_server(GreetOnly, Container())
    container = Container()
    container.singleton(Clock, SystemClock)
    assert list(compile_server(GreetOnly, container).tools) == ["greet"]


def test_an_explicit_empty_name_fails_compilation() -> None:
    class BlankTool(Tool):
        name = ""

        async def handle(self) -> McpResponse:
            return McpResponse.text("x")

    class BlankServer(Server):
        tools = (BlankTool,)

    with pytest.raises(CompileError, match="invalid name ''"):
        compile_server(BlankServer, Container())
