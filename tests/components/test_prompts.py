"""Prompts: declared arguments, validation, roles, content kinds, several messages."""

from __future__ import annotations

import base64
import logging
from types import MappingProxyType
from typing import Any

import mcp
import pytest
from mcp import types

from container import Container
from mcp_adapter import CompileError, Icon, McpResponse, Prompt, PromptArgument, Server
from mcp_adapter import compile_server as compile_catalog
from mcp_adapter.testing import McpTestClient
from tests.components.support import ERAS, SDK_MODES, sdk_client

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\nprompt-image"


class Review(Prompt):
    """Ask for a code review."""

    name = "review"
    title = "Code review"
    icons = (Icon(src="https://example.com/review.png"),)
    meta = MappingProxyType({"team": "platform"})
    arguments = (
        PromptArgument(name="code", title="Code", description="The code to review", required=True),
        PromptArgument(name="language", description="Its language"),
    )

    async def handle(self, code: str, language: str = "python") -> McpResponse:
        return McpResponse.text(f"Review this {language}:\n{code}")


class Dialogue(Prompt):
    name = "dialogue"
    arguments = (PromptArgument(name="topic", required=True),)

    def handle(self, topic: str) -> list[McpResponse]:
        return [
            McpResponse.text(f"Tell me about {topic}."),
            McpResponse.text(f"{topic} is a big subject.").asAssistant(),
            McpResponse.text("Go on.").asUser(),
        ]


class Rich(Prompt):
    name = "rich"

    def handle(self) -> list[McpResponse]:
        return [
            McpResponse.image(PNG, "image/png"),
            McpResponse.resource("docs://style", text="Use four spaces.", mime_type="text/plain"),
            McpResponse.resource("docs://logo", blob=PNG, mime_type="image/png").asAssistant(),
        ]


class Count(Prompt):
    name = "count"
    arguments = (PromptArgument(name="times", required=True),)

    def handle(self, times: int) -> McpResponse:
        return McpResponse.text(f"{times!r} is {type(times).__name__}")


class Failing(Prompt):
    name = "failing"

    def handle(self) -> McpResponse:
        raise RuntimeError("secret internals")


class Prompts(Server):
    name = "Prompts"
    prompts = (Review, Dialogue, Rich, Count, Failing)


def client(era: str) -> McpTestClient:
    return McpTestClient(Container(), Prompts, protocol=era)


async def get(era: str, name: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
    result = (await client(era).prompt(name, arguments)).assertOk().result
    assert result is not None
    return result


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize("era", ERAS)
async def test_prompts_are_listed_with_their_arguments(era: str) -> None:
    result = (await client(era).list_prompts()).assertOk().result
    assert result is not None
    by_name = {p["name"]: p for p in result["prompts"]}
    assert list(by_name) == ["review", "dialogue", "rich", "count", "failing"]
    assert by_name["review"] == {
        "name": "review",
        "title": "Code review",
        "description": "Ask for a code review.",
        "icons": [{"src": "https://example.com/review.png"}],
        "_meta": {"team": "platform"},
        "arguments": [
            {
                "name": "code",
                "title": "Code",
                "description": "The code to review",
                "required": True,
            },
            {"name": "language", "description": "Its language", "required": False},
        ],
    }
    assert "arguments" not in by_name["rich"]


@pytest.mark.parametrize("era", ERAS)
async def test_arguments_arrive_by_name_and_defaults_fill_the_rest(era: str) -> None:
    result = await get(era, "review", {"code": "print(1)"})
    assert result["description"] == "Ask for a code review."
    assert result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Review this python:\nprint(1)"}}
    ]
    result = await get(era, "review", {"code": "x", "language": "rust"})
    assert result["messages"][0]["content"]["text"] == "Review this rust:\nx"


@pytest.mark.parametrize("era", ERAS)
async def test_a_missing_required_argument_is_invalid_params(era: str) -> None:
    error = (await client(era).prompt("review", {"language": "go"})).error
    assert error == {
        "code": types.INVALID_PARAMS,
        "message": "Missing required prompt argument(s): code",
    }


@pytest.mark.parametrize("era", ERAS)
async def test_an_unknown_argument_is_rejected(era: str) -> None:
    error = (await client(era).prompt("review", {"code": "x", "colour": "red"})).error
    assert error == {"code": types.INVALID_PARAMS, "message": "Unknown prompt argument(s): colour"}


@pytest.mark.parametrize("era", ERAS)
async def test_an_unknown_prompt_is_invalid_params(era: str) -> None:
    error = (await client(era).prompt("nope", {})).error
    assert error == {"code": types.INVALID_PARAMS, "message": "Unknown prompt: nope"}


@pytest.mark.parametrize("era", ERAS)
async def test_roles_default_to_user_and_several_responses_are_several_messages(era: str) -> None:
    result = await get(era, "dialogue", {"topic": "MCP"})
    assert [(m["role"], m["content"]["text"]) for m in result["messages"]] == [
        ("user", "Tell me about MCP."),
        ("assistant", "MCP is a big subject."),
        ("user", "Go on."),
    ]


@pytest.mark.parametrize("era", ERAS)
async def test_image_and_embedded_resource_content(era: str) -> None:
    result = await get(era, "rich")
    assert result["messages"] == [
        {"role": "user", "content": {"type": "image", "data": b64(PNG), "mimeType": "image/png"}},
        {
            "role": "user",
            "content": {
                "type": "resource",
                "resource": {
                    "uri": "docs://style",
                    "mimeType": "text/plain",
                    "text": "Use four spaces.",
                },
            },
        },
        {
            "role": "assistant",
            "content": {
                "type": "resource",
                "resource": {"uri": "docs://logo", "mimeType": "image/png", "blob": b64(PNG)},
            },
        },
    ]


@pytest.mark.parametrize("era", ERAS)
async def test_typed_arguments_are_converted_from_text(era: str) -> None:
    result = await get(era, "count", {"times": "3"})
    assert result["messages"][0]["content"]["text"] == "3 is int"
    error = (await client(era).prompt("count", {"times": "three"})).error
    assert error is not None
    assert error["code"] == types.INVALID_PARAMS
    assert "times" in error["message"]
    assert "three" not in error["message"]


@pytest.mark.parametrize("era", ERAS)
async def test_a_failing_prompt_is_an_internal_error_with_an_incident(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="mcp_adapter"):
        error = (await client(era).prompt("failing")).error
    assert error is not None
    assert error["code"] == types.INTERNAL_ERROR
    assert error["message"].startswith("Prompt failed (incident ")
    assert "secret" not in str(error)
    assert any("secret internals" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_prompts_through_the_sdk_client(mode: str) -> None:
    async with sdk_client(Prompts, Container(), mode) as sdk:
        listed = await sdk.list_prompts()
        review = next(p for p in listed.prompts if p.name == "review")
        assert review.arguments == [
            types.PromptArgument(
                name="code", title="Code", description="The code to review", required=True
            ),
            types.PromptArgument(name="language", description="Its language", required=False),
        ]
        dialogue = await sdk.get_prompt("dialogue", {"topic": "MCP"})
        assert [m.role for m in dialogue.messages] == ["user", "assistant", "user"]
        rich = await sdk.get_prompt("rich")
        image, text_resource, blob_resource = (m.content for m in rich.messages)
        assert isinstance(image, types.ImageContent)
        assert base64.b64decode(image.data) == PNG
        assert isinstance(text_resource, types.EmbeddedResource)
        assert isinstance(text_resource.resource, types.TextResourceContents)
        assert isinstance(blob_resource, types.EmbeddedResource)
        assert isinstance(blob_resource.resource, types.BlobResourceContents)
        for arguments in ({}, {"code": "x", "colour": "red"}):
            with pytest.raises(mcp.MCPError) as raised:
                await sdk.get_prompt("review", arguments)
            assert raised.value.code == types.INVALID_PARAMS


# -- compilation --------------------------------------------------------------------------------


def compile_prompts(*prompts: type[Prompt]) -> Any:
    return compile_catalog(type("Srv", (Server,), {"prompts": prompts}), Container())


class Duplicated(Prompt):
    arguments = (PromptArgument(name="a"), PromptArgument(name="a"))

    def handle(self, a: str = "") -> McpResponse:
        return McpResponse.text(a)


def test_duplicate_argument_names_fail_compilation() -> None:
    with pytest.raises(CompileError, match="duplicate prompt argument names"):
        compile_prompts(Duplicated)


class Unsourced(Prompt):
    arguments = (PromptArgument(name="topic"),)

    def handle(self, topic: str, page: int) -> McpResponse:
        return McpResponse.text(topic)


def test_a_parameter_that_is_no_argument_and_no_service_fails_compilation() -> None:
    with pytest.raises(CompileError) as raised:
        compile_prompts(Unsourced)
    assert "page" in str(raised.value)
    assert "has no valid source" in str(raised.value)


class Unreceived(Prompt):
    name = "unreceived"
    arguments = (PromptArgument(name="topic"), PromptArgument(name="tone"))

    def handle(self, topic: str = "") -> McpResponse:
        return McpResponse.text(topic)


def test_a_declared_argument_without_a_parameter_fails_compilation() -> None:
    with pytest.raises(CompileError, match="tone"):
        compile_prompts(Unreceived)
