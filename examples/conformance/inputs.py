"""The conformance fixtures that ask the client for input (2026-07-28 ``input_required``).

Written as input requests are meant to be: a resolver per question, its answer a
parameter of ``handle`` (``Annotated[T, Resolve(fn)]``); the first, whose wire key
the suite names (``user_name``), asks from the handler with ``McpResponse.elicit``.
"""

from __future__ import annotations

from typing import Annotated

from mcp import types

from mcp_adapter import (
    Elicit,
    ListRoots,
    McpRequest,
    McpResponse,
    Prompt,
    Resolve,
    Sample,
    Tool,
)
from schemas import Schema


class Name(Schema):
    name: str


class Color(Schema):
    color: str


class Ok(Schema):
    ok: bool


class Context(Schema):
    context: str


def _ask(text: str, max_tokens: int) -> Sample:
    content = types.TextContent(type="text", text=text)
    return Sample([types.SamplingMessage(role="user", content=content)], max_tokens=max_tokens)


def _text(result: types.CreateMessageResult) -> str:
    content = result.content
    return content.text if isinstance(content, types.TextContent) else str(content)


# -- resolvers ----------------------------------------------------------------------------------


async def capital_question() -> Sample:
    return _ask("What is the capital of France?", 100)


async def greeting() -> Sample:
    return _ask("Generate a greeting", 50)


async def client_roots() -> ListRoots:
    return ListRoots()


async def user_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


async def step1() -> Elicit[Name]:
    return Elicit("Step 1: What is your name?", Name)


async def step2(name: Annotated[Name, Resolve(step1)]) -> Elicit[Color]:
    """Asked once step 1 is answered: a second round."""
    return Elicit(f"Step 2: What is your favorite color, {name.name}?", Color)


async def confirm() -> Elicit[Ok]:
    return Elicit("Please confirm", Ok)


async def name_if_elicitation(request: McpRequest) -> Elicit[Name] | None:
    """Asks only a client that declared elicitation."""
    return (
        Elicit("What is your name?", Name) if "elicitation" in request.client_capabilities else None
    )


async def greeting_if_sampling(request: McpRequest) -> Sample | None:
    return _ask("Generate a greeting", 50) if "sampling" in request.client_capabilities else None


async def user_context() -> Elicit[Context]:
    return Elicit("What context should the prompt use?", Context)


# -- tools --------------------------------------------------------------------------------------


class InputElicitationTool(Tool):
    name = "test_input_required_result_elicitation"
    description = "Asks the user's name (the suite names the question user_name)."

    async def handle(self, request: McpRequest) -> McpResponse:
        answer = request.input_responses.get("user_name")
        if answer is None or answer["action"] != "accept":
            return McpResponse.elicit("What is your name?", Name, key="user_name")
        return McpResponse.text(f"Hello, {answer['content']['name']}!")


class InputSamplingTool(Tool):
    name = "test_input_required_result_sampling"
    description = "Asks the client's model a question (sampling)."

    async def handle(
        self, answer: Annotated[types.CreateMessageResult, Resolve(capital_question)]
    ) -> McpResponse:
        return McpResponse.text(_text(answer))


class InputRootsTool(Tool):
    name = "test_input_required_result_list_roots"
    description = "Asks the client for its roots."

    async def handle(
        self, roots: Annotated[types.ListRootsResult, Resolve(client_roots)]
    ) -> McpResponse:
        return McpResponse.text("Roots: " + ", ".join(str(root.uri) for root in roots.roots))


class InputRequestStateTool(Tool):
    name = "test_input_required_result_request_state"
    description = "Asks for a confirmation; the answer comes back with the sealed requestState."

    async def handle(self, answer: Annotated[Ok, Resolve(confirm)]) -> McpResponse:
        return McpResponse.text(f"state-ok: confirmed={answer.ok}")


class InputMultipleTool(Tool):
    name = "test_input_required_result_multiple_inputs"
    description = "Asks three independent questions at once."

    async def handle(
        self,
        name: Annotated[Name, Resolve(user_name)],
        hello: Annotated[types.CreateMessageResult, Resolve(greeting)],
        roots: Annotated[types.ListRootsResult, Resolve(client_roots)],
    ) -> McpResponse:
        return McpResponse.text(f"{_text(hello)} {name.name} ({len(roots.roots)} roots)")


class InputMultiRoundTool(Tool):
    name = "test_input_required_result_multi_round"
    description = "Asks a name, then a color: two rounds."

    async def handle(
        self,
        name: Annotated[Name, Resolve(step1)],
        color: Annotated[Color, Resolve(step2)],
    ) -> McpResponse:
        return McpResponse.text(f"{name.name} likes {color.color}")


class InputTamperedStateTool(Tool):
    name = "test_input_required_result_tampered_state"
    description = "Asks a name; its requestState is sealed, a tampered one is refused."

    async def handle(self, name: Annotated[Name, Resolve(user_name)]) -> McpResponse:
        return McpResponse.text(f"Hello, {name.name}!")


class InputCapabilitiesTool(Tool):
    name = "test_input_required_result_capabilities"
    description = "Asks only what the client declared it can answer."

    async def handle(
        self,
        name: Annotated[Name | None, Resolve(name_if_elicitation)],
        hello: Annotated[types.CreateMessageResult | None, Resolve(greeting_if_sampling)],
    ) -> McpResponse:
        return McpResponse.text(f"name={name.name if name else '-'} greeting={bool(hello)}")


class MissingCapabilityTool(Tool):
    name = "test_missing_capability"
    description = "Needs sampling: a client that did not declare it gets -32021."

    async def handle(
        self, answer: Annotated[types.CreateMessageResult, Resolve(capital_question)]
    ) -> McpResponse:
        return McpResponse.text(_text(answer))


class StreamingElicitationTool(Tool):
    name = "test_streaming_elicitation"
    description = "Asks a name: on 2026-07-28 an input_required result, never a request."

    async def handle(self, name: Annotated[Name, Resolve(user_name)]) -> McpResponse:
        return McpResponse.text(f"Hello, {name.name}!")


class InputPrompt(Prompt):
    name = "test_input_required_result_prompt"
    description = "A prompt that asks the user for its context first."

    async def handle(self, context: Annotated[Context, Resolve(user_context)]) -> McpResponse:
        return McpResponse.text(f"Write with this context: {context.context}")


INPUT_TOOLS = (
    InputElicitationTool,
    InputSamplingTool,
    InputRootsTool,
    InputRequestStateTool,
    InputMultipleTool,
    InputMultiRoundTool,
    InputTamperedStateTool,
    InputCapabilitiesTool,
    MissingCapabilityTool,
    StreamingElicitationTool,
)
