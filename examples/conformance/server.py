"""Every server fixture of the MCP conformance suite, as ``Tool``/``Resource``/``Prompt`` classes.

Serve it with ``python -m examples.conformance`` (streamable HTTP, stateful, on
127.0.0.1) and run ``npx @modelcontextprotocol/conformance server --url ...``.
"""

from __future__ import annotations

import json
import warnings
from typing import Any, Literal

import anyio
from examples.conformance.fixtures import PNG, WAV
from examples.conformance.inputs import INPUT_TOOLS, InputPrompt
from examples.conformance.tasks import TASK_TOOLS
from mcp import types
from mcp.server.caching import CacheHint
from pydantic import ConfigDict, Field

from mcp_adapter import (
    ClientLogger,
    McpRequest,
    McpResponse,
    Notifier,
    Progress,
    Prompt,
    PromptArgument,
    Resource,
    Server,
    Tool,
    ToolAnnotations,
)
from schemas import Schema

STEP = 0.05
"""The ~50 ms pauses the logging and progress scenarios ask for."""
READ_ONLY = ToolAnnotations(read_only=True, destructive=False, idempotent=True, open_world=False)


class FixtureTool(Tool):
    annotations = READ_ONLY


# -- tools: content kinds --------------------------------------------------------------


class SimpleTextTool(FixtureTool):
    name = "test_simple_text"
    description = "Returns a simple text response."

    async def handle(self) -> McpResponse:
        return McpResponse.text("This is a simple text response for testing.")


class ImageContentTool(FixtureTool):
    name = "test_image_content"
    description = "Returns a 1x1 red PNG."

    async def handle(self) -> McpResponse:
        return McpResponse.image(PNG, "image/png")


class AudioContentTool(FixtureTool):
    name = "test_audio_content"
    description = "Returns a short silent WAV."

    async def handle(self) -> McpResponse:
        return McpResponse.audio(WAV, "audio/wav")


class EmbeddedResourceTool(FixtureTool):
    name = "test_embedded_resource"
    description = "Returns an embedded text resource."

    async def handle(self) -> McpResponse:
        return McpResponse.resource(
            "test://embedded-resource",
            text="This is an embedded resource content.",
            mime_type="text/plain",
        )


class MultipleContentTypesTool(FixtureTool):
    name = "test_multiple_content_types"
    description = "Returns text, an image and an embedded resource."

    async def handle(self) -> list[McpResponse]:
        return [
            McpResponse.text("Multiple content types test:"),
            McpResponse.image(PNG, "image/png"),
            McpResponse.resource(
                "test://mixed-content-resource",
                text=json.dumps({"test": "data", "value": 123}, separators=(",", ":")),
                mime_type="application/json",
            ),
        ]


class ErrorHandlingTool(FixtureTool):
    name = "test_error_handling"
    description = "Always fails, as a tool result with isError."

    async def handle(self) -> McpResponse:
        return McpResponse.error("This tool intentionally returns an error for testing")


# -- tools: talking to the client during a call -------------------------------------------


class ToolWithLoggingTool(FixtureTool):
    name = "test_tool_with_logging"
    description = "Sends three info log messages while it runs."

    async def handle(self, log: ClientLogger) -> McpResponse:
        await log.info("Tool execution started")
        await anyio.sleep(STEP)
        await log.info("Tool processing data")
        await anyio.sleep(STEP)
        await log.info("Tool execution completed")
        return McpResponse.text("Tool with logging executed successfully")


class LoggingTool(FixtureTool):
    name = "test_logging_tool"
    description = "Logs one info record: only a request that asked for records gets it."

    async def handle(self, log: ClientLogger) -> McpResponse:
        await log.info("Diagnostic trace logging activated")
        return McpResponse.text("Logging evaluated")


class ToolWithProgressTool(FixtureTool):
    name = "test_tool_with_progress"
    description = "Reports progress 0, 50 and 100 of 100 when asked for progress."

    async def handle(self, progress: Progress) -> McpResponse:
        for done in (0, 50, 100):
            await progress.report(done, 100)
            if done < 100:
                await anyio.sleep(STEP)
        return McpResponse.text("Tool with progress executed successfully")


# -- tools: announcing changes to listening clients -----------------------------------------


class TriggerToolChangeTool(FixtureTool):
    name = "test_trigger_tool_change"
    description = "Announces that the tool list changed, to every client listening for it."

    async def handle(self, notifier: Notifier) -> McpResponse:
        await notifier.tool_list_changed()
        return McpResponse.text("Mutation triggered")


class TriggerPromptChangeTool(FixtureTool):
    name = "test_trigger_prompt_change"
    description = "Announces that the prompt list changed, to every client listening for it."

    async def handle(self, notifier: Notifier) -> McpResponse:
        await notifier.prompt_list_changed()
        return McpResponse.text("Mutation triggered")


class UpdateWatchedInput(Schema):
    uri: str = "test://watched-resource"


class UpdateResourceTool(Tool[UpdateWatchedInput]):
    name = "test_update_resource"
    description = "Announces that a resource changed, to the clients subscribed to it."
    annotations = READ_ONLY

    async def handle(self, payload: UpdateWatchedInput, notifier: Notifier) -> McpResponse:
        await notifier.resource_updated(payload.uri)
        return McpResponse.text(f"Updated {payload.uri}")


class SamplingInput(Schema):
    prompt: str


class SamplingTool(Tool[SamplingInput]):
    name = "test_sampling"
    description = "Asks the client's model to answer the prompt (sampling)."
    annotations = READ_ONLY

    async def handle(self, payload: SamplingInput, request: McpRequest) -> McpResponse:
        ctx = request.context
        capabilities = request.client_capabilities
        if ctx is None or "sampling" not in capabilities:
            return McpResponse.error("The client does not support sampling.")
        message = types.SamplingMessage(
            role="user", content=types.TextContent(type="text", text=payload.prompt)
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # sampling is deprecated in 2026-07-28
            result = await ctx.session.create_message(
                [message], max_tokens=100, related_request_id=ctx.request_id
            )
        text = getattr(result.content, "text", str(result.content))
        return McpResponse.text(f"LLM response: {text}")


# -- tools: elicitation -------------------------------------------------------------------


class ElicitationInput(Schema):
    message: str


USER_SCHEMA = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}


def answered(request: McpRequest) -> dict[str, Any] | None:
    answer = request.input_responses.get("input")
    return None if answer is None else {key: answer[key] for key in answer}


class ElicitationTool(Tool[ElicitationInput]):
    name = "test_elicitation"
    description = "Asks the user for a username and an email (elicitation)."
    annotations = READ_ONLY

    async def handle(self, payload: ElicitationInput, request: McpRequest) -> McpResponse:
        answer = answered(request)
        if answer is None:
            return McpResponse.elicit(payload.message, USER_SCHEMA)
        content = json.dumps(_plain(answer.get("content")))
        return McpResponse.text(f"User response: action={answer['action']}, content={content}")


DEFAULTS_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}


ENUMS_SCHEMA = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
    "required": [],
}


def _plain(value: Any) -> Any:
    """Frozen request values back to JSON-ready ones."""
    if isinstance(value, dict) or hasattr(value, "items"):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    return value


class ElicitationDefaultsTool(FixtureTool):
    name = "test_elicitation_sep1034_defaults"
    description = "Asks for input whose every field has a default (SEP-1034)."

    async def handle(self, request: McpRequest) -> McpResponse:
        answer = answered(request)
        if answer is None:
            return McpResponse.elicit(
                "Test client default value handling - please accept with defaults",
                DEFAULTS_SCHEMA,
            )
        content = json.dumps(_plain(answer.get("content")))
        return McpResponse.text(
            f"Elicitation completed: action={answer['action']}, content={content}"
        )


class ElicitationEnumsTool(FixtureTool):
    name = "test_elicitation_sep1330_enums"
    description = "Asks for input with all five enum forms (SEP-1330)."

    async def handle(self, request: McpRequest) -> McpResponse:
        answer = answered(request)
        if answer is None:
            return McpResponse.elicit("Test enum schema variants", ENUMS_SCHEMA)
        content = json.dumps(_plain(answer.get("content")))
        return McpResponse.text(
            f"Elicitation completed: action={answer['action']}, content={content}"
        )


# -- tools: schema and transport ---------------------------------------------------------------


class address(Schema):
    """Lower-case on purpose: the fixture expects ``$defs`` to hold ``address``."""

    model_config = ConfigDict(json_schema_extra={"$anchor": "addressDef"})

    street: str | None = None
    city: str | None = None


class JsonSchema2020Input(Schema):
    """Published with the JSON Schema 2020-12 keywords the fixture checks for: composition
    (``allOf``/``anyOf``), conditionals (``if``/``then``/``else``) and an ``$anchor``."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {
                "properties": {"contactMethod": {"const": "phone"}},
                "required": ["contactMethod"],
            },
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
        },
    )

    name: str | None = None
    home: address | None = Field(default=None, alias="address")
    contactMethod: Literal["phone", "email"] | None = None
    phone: str | None = None
    email: str | None = None


class JsonSchema2020Tool(Tool[JsonSchema2020Input]):
    name = "json_schema_2020_12_tool"
    description = "Tool with JSON Schema 2020-12 features"
    annotations = READ_ONLY

    async def handle(self, payload: JsonSchema2020Input) -> McpResponse:
        return McpResponse.text(f"Received: {payload.model_dump_json(exclude_none=True)}")


class HeaderInput(Schema):
    region: str = Field(json_schema_extra={"x-mcp-header": "Region"})


class HeaderTool(Tool[HeaderInput]):
    name = "test_header_parameter"
    description = (
        "Takes a parameter that 2026-07-28 clients also send as the Mcp-Param-Region header."
    )
    annotations = READ_ONLY

    async def handle(self, payload: HeaderInput) -> McpResponse:
        return McpResponse.text(f"Region: {payload.region}")


class ReconnectionTool(FixtureTool):
    name = "test_reconnection"
    description = "Closes its SSE stream mid-call; the result arrives after the client reconnects."

    async def handle(self, request: McpRequest) -> McpResponse:
        ctx = request.context
        close = getattr(ctx, "close_sse_stream", None)
        if close is not None:
            await close()
            await anyio.sleep(STEP * 4)
        return McpResponse.text("Reconnection test completed successfully")


# -- resources ---------------------------------------------------------------------------------


class StaticTextResource(Resource):
    name = "static-text"
    uri = "test://static-text"
    mime_type = "text/plain"
    description = "A static text resource."

    async def handle(self) -> McpResponse:
        return McpResponse.text("This is the content of the static text resource.")


class StaticBinaryResource(Resource):
    name = "static-binary"
    uri = "test://static-binary"
    mime_type = "image/png"
    description = "A static binary resource (a 1x1 red PNG)."

    async def handle(self) -> McpResponse:
        return McpResponse.blob(PNG, mime_type="image/png")


class WatchedResource(Resource):
    name = "watched-resource"
    uri = "test://watched-resource"
    mime_type = "text/plain"
    description = "A resource clients may subscribe to (test_update_resource changes it)."

    async def handle(self) -> McpResponse:
        return McpResponse.text("Watched resource content.")


class TemplateDataResource(Resource):
    name = "template-data"
    uri_template = "test://template/{id}/data"
    mime_type = "application/json"
    description = "Data for one id, from a URI template."

    async def handle(self, id: str) -> McpResponse:
        data = {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}
        return McpResponse.text(json.dumps(data, separators=(",", ":")))


# -- prompts -------------------------------------------------------------------------------------


class SimplePrompt(Prompt):
    name = "test_simple_prompt"
    description = "A simple prompt without arguments."

    async def handle(self) -> McpResponse:
        return McpResponse.text("This is a simple prompt for testing.").asUser()


class PromptWithArguments(Prompt):
    name = "test_prompt_with_arguments"
    description = "A prompt with two required arguments."
    arguments = (
        PromptArgument(name="arg1", description="First test argument", required=True),
        PromptArgument(name="arg2", description="Second test argument", required=True),
    )

    async def handle(self, arg1: str, arg2: str) -> McpResponse:
        return McpResponse.text(f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'").asUser()

    def complete(self, argument: str, value: str) -> list[str]:
        words = {"arg1": ["paris", "park", "party"], "arg2": ["world", "wonder", "work"]}
        return [word for word in words.get(argument, []) if word.startswith(value)]


class PromptWithEmbeddedResource(Prompt):
    name = "test_prompt_with_embedded_resource"
    description = "A prompt that embeds the resource it is given."
    arguments = (
        PromptArgument(
            name="resourceUri", description="URI of the resource to embed", required=True
        ),
    )

    async def handle(self, resourceUri: str) -> list[McpResponse]:
        return [
            McpResponse.resource(
                resourceUri, text="Embedded resource content for testing.", mime_type="text/plain"
            ).asUser(),
            McpResponse.text("Please process the embedded resource above.").asUser(),
        ]


class PromptWithImage(Prompt):
    name = "test_prompt_with_image"
    description = "A prompt with an image."

    async def handle(self) -> list[McpResponse]:
        return [
            McpResponse.image(PNG, "image/png").asUser(),
            McpResponse.text("Please analyze the image above.").asUser(),
        ]


class ConformanceServer(Server):
    name = "mcp-adapter-conformance"
    version = "1.0.0"
    description = "Every server fixture of the MCP conformance suite."
    tools = (
        SimpleTextTool,
        ImageContentTool,
        AudioContentTool,
        EmbeddedResourceTool,
        MultipleContentTypesTool,
        ErrorHandlingTool,
        ToolWithLoggingTool,
        LoggingTool,
        ToolWithProgressTool,
        TriggerToolChangeTool,
        TriggerPromptChangeTool,
        UpdateResourceTool,
        SamplingTool,
        ElicitationTool,
        ElicitationDefaultsTool,
        ElicitationEnumsTool,
        JsonSchema2020Tool,
        HeaderTool,
        ReconnectionTool,
        *INPUT_TOOLS,
        *TASK_TOOLS,
    )
    resources = (StaticTextResource, StaticBinaryResource, WatchedResource, TemplateDataResource)
    prompts = (
        SimplePrompt,
        PromptWithArguments,
        PromptWithEmbeddedResource,
        PromptWithImage,
        InputPrompt,
    )
    cache_hints = {  # noqa: RUF012 - what every listing and read says of its freshness
        "tools/list": CacheHint(ttl_ms=300_000, scope="public"),
        "prompts/list": CacheHint(ttl_ms=300_000, scope="public"),
        "resources/list": CacheHint(ttl_ms=300_000, scope="public"),
        "resources/templates/list": CacheHint(ttl_ms=300_000, scope="public"),
        "resources/read": CacheHint(ttl_ms=300_000, scope="private"),
    }
