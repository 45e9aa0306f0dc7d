"""Input and output contracts: generics, attributes, no input, and every output kind."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from typing_extensions import TypedDict

from container import Container
from mcp_adapter import McpResponse, Server, Tool
from schemas import Schema
from tests.tools.drivers import Driver

pytestmark = pytest.mark.anyio


class Question(Schema):
    text: str
    shout: bool = False


class OtherQuestion(Schema):
    topic: str


class Answer(Schema):
    answer: str


class OtherAnswer(Schema):
    verdict: bool


seen: list[Any] = []


@pytest.fixture(autouse=True)
def _forget() -> None:
    seen.clear()


# -- Tool[Input] -----------------------------------------------------------------------------


class AskTool(Tool[Question]):
    name = "ask"

    async def handle(self, payload: Question) -> McpResponse:
        seen.append(payload)
        text = payload.text.upper() if payload.shout else payload.text
        return McpResponse.text(text)


class AskStructuredTool(Tool[Question]):
    """Declares no output, so any JSON value may be structured."""

    name = "ask-structured"

    async def handle(self, payload: Question) -> McpResponse:
        return McpResponse.structured([payload.text, payload.shout])


class InputOnlyServer(Server):
    tools = (AskTool, AskStructuredTool)


async def test_input_generic_lists_its_schema_and_no_output(driver: Driver) -> None:
    entry = await driver.tool_entry(Container(), InputOnlyServer, "ask")
    schema = entry["inputSchema"]
    assert schema["type"] == "object"
    assert set(schema["properties"]) == {"text", "shout"}
    assert schema["required"] == ["text"]
    assert schema["additionalProperties"] is False
    assert "outputSchema" not in entry


async def test_input_generic_hands_a_validated_instance_to_handle(driver: Driver) -> None:
    result = await driver.call(Container(), InputOnlyServer, "ask", {"text": "hi"})
    result.assertOk()
    assert result.texts == ["hi"]
    (payload,) = seen
    assert isinstance(payload, Question)
    assert payload == Question(text="hi", shout=False)


async def test_input_generic_accepts_text_only_success(driver: Driver) -> None:
    result = await driver.call(Container(), InputOnlyServer, "ask", {"text": "a", "shout": True})
    result.assertOk()
    assert result.result is not None
    assert "structuredContent" not in result.result
    assert result.texts == ["A"]


async def test_without_an_output_contract_any_json_may_be_structured(driver: Driver) -> None:
    result = await driver.call(Container(), InputOnlyServer, "ask-structured", {"text": "q"})
    result.assertOk()
    result.assertStructured(["q", False] if driver.modern else {"result": ["q", False]})
    assert [json.loads(text) for text in result.texts] == [["q", False]]


# -- Tool[Input, Output] and the attributes -------------------------------------------------------


class AnswerTool(Tool[Question, Answer]):
    name = "answer"

    async def handle(self, payload: Question) -> McpResponse:
        return McpResponse.structured(Answer(answer=f"re: {payload.text}"))


class AttributesWinTool(Tool[Question, Answer]):
    """Both attributes differ from the generic arguments: the attributes are the contract."""

    name = "attributes-win"
    input = OtherQuestion
    output = OtherAnswer

    async def handle(self, payload: OtherQuestion) -> McpResponse:
        seen.append(payload)
        return McpResponse.structured({"verdict": payload.topic == "yes"})


class NoneAttributesTool(Tool[Question, Answer]):
    """``None`` attributes do not override: the generic arguments stay the contract."""

    name = "none-attributes"
    input = None
    output = None

    async def handle(self, payload: Question) -> McpResponse:
        return McpResponse.structured({"answer": payload.text})


class AttributesOnlyTool(Tool):
    name = "attributes-only"
    input = Question
    output = Answer

    async def handle(self, payload: Question) -> McpResponse:
        return McpResponse.structured({"answer": payload.text})


class InheritedTool(AnswerTool):
    """A subclass keeps its parent's contracts."""

    name = "inherited"


class ContractServer(Server):
    tools = (AnswerTool, AttributesWinTool, NoneAttributesTool, AttributesOnlyTool, InheritedTool)


@pytest.mark.parametrize(
    ("tool", "inputs", "outputs"),
    [
        ("answer", {"text", "shout"}, {"answer"}),
        ("attributes-win", {"topic"}, {"verdict"}),
        ("none-attributes", {"text", "shout"}, {"answer"}),
        ("attributes-only", {"text", "shout"}, {"answer"}),
        ("inherited", {"text", "shout"}, {"answer"}),
    ],
)
async def test_declared_contracts_are_listed(
    driver: Driver, tool: str, inputs: set[str], outputs: set[str]
) -> None:
    entry = await driver.tool_entry(Container(), ContractServer, tool)
    assert set(entry["inputSchema"]["properties"]) == inputs
    assert set(entry["outputSchema"]["properties"]) == outputs
    assert entry["outputSchema"]["type"] == "object"


async def test_attributes_win_over_generics_at_call_time(driver: Driver) -> None:
    result = await driver.call(Container(), ContractServer, "attributes-win", {"topic": "yes"})
    result.assertOk().assertStructured({"verdict": True})
    assert seen == [OtherQuestion(topic="yes")]
    rejected = await driver.call(Container(), ContractServer, "attributes-win", {"text": "x"})
    rejected.assertError("Invalid tool arguments")
    rejected.assertTextContains("topic")


@pytest.mark.parametrize(
    ("tool", "answer"),
    [
        ("answer", "re: ok"),
        ("none-attributes", "ok"),
        ("attributes-only", "ok"),
        ("inherited", "re: ok"),
    ],
)
async def test_input_output_tools_return_validated_objects(
    driver: Driver, tool: str, answer: str
) -> None:
    result = await driver.call(Container(), ContractServer, tool, {"text": "ok"})
    result.assertOk().assertStructured({"answer": answer})


# -- no input -------------------------------------------------------------------------------------


class PingTool(Tool):
    async def handle(self) -> McpResponse:
        seen.append("ping")
        return McpResponse.text("pong")


class Clock:
    def now(self) -> str:
        return "noon"


class TimeTool(Tool):
    """A no-input tool may still take services."""

    async def handle(self, clock: Clock) -> McpResponse:
        return McpResponse.text(clock.now())


class NoInputServer(Server):
    tools = (PingTool, TimeTool)


async def test_no_input_tool_lists_an_empty_closed_object(driver: Driver) -> None:
    entry = await driver.tool_entry(Container(), NoInputServer, "ping")
    schema = entry["inputSchema"]
    assert schema["type"] == "object"
    assert schema.get("properties", {}) == {}
    assert schema["additionalProperties"] is False
    assert "required" not in schema


async def test_no_input_schema_does_not_publish_internal_names(driver: Driver) -> None:
    entry = await driver.tool_entry(Container(), NoInputServer, "ping")
    assert "_EmptyInput" not in json.dumps(entry)
    assert "description" not in entry["inputSchema"]


@pytest.mark.parametrize("arguments", [None, {}], ids=["omitted", "empty"])
async def test_no_input_tool_accepts_only_an_empty_object(
    driver: Driver, arguments: dict[str, Any] | None
) -> None:
    result = await driver.call(Container(), NoInputServer, "ping", arguments)
    result.assertOk()
    assert result.texts == ["pong"]
    assert seen == ["ping"]


async def test_no_input_tool_rejects_any_argument(driver: Driver) -> None:
    result = await driver.call(Container(), NoInputServer, "ping", {"payload": 1})
    result.assertError("Invalid tool arguments")
    result.assertTextContains("payload")
    assert seen == []


async def test_no_input_tool_gets_its_services(driver: Driver) -> None:
    result = await driver.call(Container(), NoInputServer, "time", {})
    result.assertOk()
    assert result.texts == ["noon"]


# -- output types ---------------------------------------------------------------------------


class Point(TypedDict):
    x: int
    y: int


@dataclasses.dataclass
class Size:
    width: int
    height: int


class Label(Schema):
    text: str
    size: int = 12


OUTPUTS = [
    # (id, output type, returned value, structured in 2026-07-28, outputSchema in 2026-07-28)
    ("str", str, "hello", "hello", {"type": "string"}),
    ("int", int, 42, 42, {"type": "integer"}),
    ("list", list[int], [1, 2, 3], [1, 2, 3], {"type": "array", "items": {"type": "integer"}}),
    ("typeddict", Point, {"x": 1, "y": 2}, {"x": 1, "y": 2}, None),
    ("dataclass", Size, Size(width=3, height=4), {"width": 3, "height": 4}, None),
    ("dataclass-from-dict", Size, {"width": 5, "height": 6}, {"width": 5, "height": 6}, None),
    ("schema", Label, Label(text="hi"), {"text": "hi", "size": 12}, None),
    ("schema-from-dict", Label, {"text": "yo", "size": 9}, {"text": "yo", "size": 9}, None),
]


def _output_tool(ident: str, output: Any, value: Any) -> type[Tool[Any, Any]]:
    async def handle(self: Any) -> McpResponse:
        return McpResponse.structured(value)

    namespace = {"name": f"out-{ident}", "output": output, "handle": handle}
    return type(f"Out{ident.title().replace('-', '')}Tool", (Tool,), namespace)


class OutputServer(Server):
    tools = tuple(_output_tool(ident, output, value) for ident, output, value, _, _ in OUTPUTS)


@pytest.mark.parametrize(
    ("ident", "expected"), [(ident, expected) for ident, _, _, expected, _ in OUTPUTS]
)
async def test_output_types_become_structured_content(
    driver: Driver, ident: str, expected: Any
) -> None:
    result = await driver.call(Container(), OutputServer, f"out-{ident}", {})
    result.assertOk()
    wrapped = driver.modern or isinstance(expected, dict)
    result.assertStructured(expected if wrapped else {"result": expected})
    # the text block is the serialized structured content; a string is its own text
    assert [text if isinstance(expected, str) else json.loads(text) for text in result.texts] == [
        expected
    ]


@pytest.mark.parametrize(
    ("ident", "output", "schema"),
    [(ident, output, schema) for ident, output, _, _, schema in OUTPUTS],
)
async def test_output_types_are_listed_as_schemas(
    driver: Driver, ident: str, output: Any, schema: dict[str, Any] | None
) -> None:
    entry = await driver.tool_entry(Container(), OutputServer, f"out-{ident}")
    listed = entry["outputSchema"]
    if schema is None:  # an object contract: the same schema in both eras
        assert listed["type"] == "object"
        assert "result" not in listed["properties"]
    elif driver.modern:
        assert listed == schema
    else:
        assert listed == {
            "type": "object",
            "properties": {"result": schema},
            "required": ["result"],
        }


class LegacyLooking(Schema):
    """An object output that happens to have a ``result`` field is not wrapped again."""

    result: int


class LegacyLookingTool(Tool):
    name = "legacy-looking"
    output = LegacyLooking

    async def handle(self) -> McpResponse:
        return McpResponse.structured({"result": 7})


class LegacyLookingServer(Server):
    tools = (LegacyLookingTool,)


async def test_an_object_with_a_result_field_is_never_wrapped(driver: Driver) -> None:
    result = await driver.call(Container(), LegacyLookingServer, "legacy-looking", {})
    result.assertOk().assertStructured({"result": 7})
