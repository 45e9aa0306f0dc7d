"""completion/complete through a component's optional ``complete`` hook."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import types

from container import Container
from mcp_adapter import McpRequest, McpResponse, Prompt, PromptArgument, Resource, Server
from mcp_adapter.testing import McpTestClient
from tests.components.support import ERAS, SDK_MODES, sdk_client

pytestmark = pytest.mark.anyio

LANGUAGES = ("python", "perl", "php", "rust", "ruby")
NOTES = {"ada": ("algorithms", "analytical-engine"), "grace": ("cobol", "compilers")}


class Catalogue:
    """A service the hooks get injected."""

    def languages(self) -> tuple[str, ...]:
        return LANGUAGES


class Snippet(Prompt):
    name = "snippet"
    arguments = (PromptArgument(name="language"), PromptArgument(name="style"))

    def handle(self, language: str = "", style: str = "") -> McpResponse:
        return McpResponse.text(language)

    def complete(self, argument: str, value: str, catalogue: Catalogue) -> list[str]:
        if argument != "language":
            return []
        return [name for name in catalogue.languages() if name.startswith(value)]


class Note(Resource):
    name = "note"
    uri_template = "notes://{user}/{title}"

    def handle(self, user: str, title: str) -> McpResponse:
        return McpResponse.text(title)

    async def complete(self, argument: str, value: str, context: dict[str, str]) -> list[str]:
        if argument == "user":
            return [user for user in NOTES if user.startswith(value)]
        return [t for t in NOTES.get(context.get("user", ""), ()) if t.startswith(value)]


class Numbers(Prompt):
    name = "numbers"
    arguments = (PromptArgument(name="n"),)

    def handle(self, n: str = "") -> McpResponse:
        return McpResponse.text(n)

    def complete(self, value: str, request: McpRequest) -> list[int]:
        assert request.method == "completion/complete"
        return list(range(250))


class Plain(Prompt):
    """No complete hook."""

    name = "plain"

    def handle(self) -> McpResponse:
        return McpResponse.text("plain")


class Completing(Server):
    prompts = (Snippet, Numbers, Plain)
    resources = (Note,)


def prompt_ref(name: str) -> dict[str, Any]:
    return {"type": "ref/prompt", "name": name}


def resource_ref(uri: str) -> dict[str, Any]:
    return {"type": "ref/resource", "uri": uri}


async def complete(
    era: str,
    ref: dict[str, Any],
    name: str,
    value: str,
    context: dict[str, str] | None = None,
    server: type[Server] = Completing,
) -> dict[str, Any]:
    params: dict[str, Any] = {"ref": ref, "argument": {"name": name, "value": value}}
    if context is not None:
        params["context"] = {"arguments": context}
    result = await McpTestClient(Container(), server, protocol=era).request(
        "completion/complete", params
    )
    assert result.result is not None, result.message
    completion: dict[str, Any] = result.result["completion"]
    return completion


@pytest.mark.parametrize("era", ERAS)
async def test_prompt_argument_completion_with_an_injected_service(era: str) -> None:
    completion = await complete(era, prompt_ref("snippet"), "language", "p")
    assert completion == {"values": ["python", "perl", "php"], "total": 3, "hasMore": False}
    other = await complete(era, prompt_ref("snippet"), "style", "p")
    assert other["values"] == []


@pytest.mark.parametrize("era", ERAS)
async def test_resource_template_variable_completion_with_context(era: str) -> None:
    users = await complete(era, resource_ref("notes://{user}/{title}"), "user", "")
    assert users["values"] == ["ada", "grace"]
    titles = await complete(
        era, resource_ref("notes://{user}/{title}"), "title", "c", context={"user": "grace"}
    )
    assert titles["values"] == ["cobol", "compilers"]
    no_context = await complete(era, resource_ref("notes://{user}/{title}"), "title", "c")
    assert no_context["values"] == []


@pytest.mark.parametrize("era", ERAS)
async def test_at_most_one_hundred_values_with_total_and_has_more(era: str) -> None:
    completion = await complete(era, prompt_ref("numbers"), "n", "")
    assert completion["values"] == [str(n) for n in range(100)]
    assert completion["total"] == 250
    assert completion["hasMore"] is True


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    "ref",
    [prompt_ref("plain"), prompt_ref("missing"), resource_ref("notes://{other}")],
    ids=["no-hook", "unknown-prompt", "unknown-template"],
)
async def test_nothing_to_complete_gives_no_values(era: str, ref: dict[str, Any]) -> None:
    completion = await complete(era, ref, "x", "")
    assert completion["values"] == []


class NoHooks(Server):
    prompts = (Plain,)


@pytest.mark.parametrize("era", ERAS)
async def test_without_any_complete_hook_the_method_is_not_served(era: str) -> None:
    result = await McpTestClient(Container(), NoHooks, protocol=era).request(
        "completion/complete",
        {"ref": prompt_ref("plain"), "argument": {"name": "x", "value": ""}},
    )
    assert result.error is not None
    assert result.error["code"] == types.METHOD_NOT_FOUND


async def test_the_completions_capability_follows_the_hooks() -> None:
    async with sdk_client(Completing, Container(), "legacy") as sdk:
        assert sdk.server_capabilities.completions is not None
    async with sdk_client(NoHooks, Container(), "legacy") as sdk:
        assert sdk.server_capabilities.completions is None
        assert sdk.server_capabilities.prompts is not None


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_completion_through_the_sdk_client(mode: str) -> None:
    async with sdk_client(Completing, Container(), mode) as sdk:
        languages = await sdk.complete(
            types.PromptReference(type="ref/prompt", name="snippet"),
            {"name": "language", "value": "ru"},
        )
        assert languages.completion.values == ["rust", "ruby"]
        titles = await sdk.complete(
            types.ResourceTemplateReference(type="ref/resource", uri="notes://{user}/{title}"),
            {"name": "title", "value": "a"},
            context_arguments={"user": "ada"},
        )
        assert titles.completion.values == ["algorithms", "analytical-engine"]
