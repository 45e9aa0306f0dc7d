"""Turning what a tool handler returned into a ``CallToolResult``."""

from __future__ import annotations

import typing
from collections.abc import Sequence
from typing import Any

from mcp import types
from pydantic import ValidationError
from pydantic_core import to_json, to_jsonable_python
from typing_extensions import is_typeddict

from mcp_adapter.compiled.legacy import LEGACY_WRAP_KEY
from mcp_adapter.declare.response import McpResponse
from mcp_adapter.errors import HandlerResultError, OutputContractError
from schemas import Contract, FieldError, render, summarize
from schemas.wire import may_hold_non_finite, non_json


def responses_of(outcome: Any, owner: str) -> tuple[McpResponse, ...]:
    if isinstance(outcome, McpResponse):
        return (outcome,)
    if (
        isinstance(outcome, list | tuple)
        and outcome
        and all(isinstance(item, McpResponse) for item in outcome)
    ):
        return tuple(outcome)
    raise HandlerResultError(
        f"{owner} returned {type(outcome).__name__}; return McpResponse, a list of them, "
        "or a complete protocol result (a dict is not converted)"
    )


def _json(value: Any) -> Any:
    try:
        return to_jsonable_python(value)
    except Exception as exc:
        raise HandlerResultError(f"structured content is not JSON-serializable: {exc}") from exc


def _checked_output(output: Contract[Any] | None, value: Any) -> tuple[Any, str]:
    """The JSON form of ``value``, validated by ``output`` if declared, and its JSON text;
    a value JSON cannot carry (``nan``, ``inf``, a lone surrogate) fails, with or without
    a contract. The text is serialized once and serves as the result's text content (a
    string is its own text, as the SDK's ``MCPServer`` renders it)."""
    if output is None:
        checked = _json(value)
    else:
        try:
            checked = output.dump(output.validate(value))
        except ValidationError as exc:
            detail = render(summarize(exc), "structured content")
            raise OutputContractError(
                f"structured content violates the output contract: {detail}"
            ) from None
    text = _representable(checked)
    return checked, checked if isinstance(checked, str) else text


def _representable(value: Any) -> str:
    """The JSON text of ``value``; ``OutputContractError`` if JSON cannot carry it as it is."""
    try:
        data = to_json(value, inf_nan_mode="constants")
    except ValueError:
        data = b"NaN"  # not encodable: let non_json say where
    if may_hold_non_finite(data):
        faults = non_json(value)
        if faults:
            raise OutputContractError(
                f"structured content cannot be sent as JSON: {render(faults, 'structured content')}"
            )
    return data.decode()


def _legacy_structured(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {LEGACY_WRAP_KEY: value}


def _on_the_wire(value: Any, *, owner: str, output: Contract[Any] | None, modern: bool) -> Any:
    """``structuredContent`` for the era; a null value a declared output allows cannot travel
    in 2026-07-28 (the SDK drops it and clients reject the result), so it is a failure there."""
    if not modern:
        return _legacy_structured(value)
    if value is None and output is not None:
        raise OutputContractError(
            f"{owner} returned null structured content; a 2026-07-28 result cannot carry null "
            "as structuredContent: make the output contract non-nullable or an object"
        )
    return value


def tool_result(
    outcome: Any,
    *,
    owner: str,
    output: Contract[Any] | None,
    modern: bool,
) -> types.CallToolResult:
    """Build the result, validating structured content against ``output`` first."""
    if (
        output is not None
        and type(outcome) is output.type
        and not isinstance(outcome, (list, tuple))
    ):
        # a value of the output contract's own class (what a @tool function returns):
        # its structured content, with no McpResponse made around it
        return _structured(outcome, owner=owner, output=output, modern=modern)
    if type(outcome) is McpResponse and not outcome.is_error and not outcome.meta:
        return _single(outcome, owner=owner, output=output, modern=modern)
    if isinstance(outcome, types.CallToolResult):  # after: a model class's check is ABCMeta's
        return _complete_result(outcome, output=output, modern=modern)
    if output is not None and of_contract(outcome, output):
        # A value of the output contract's type is its structured content, as a @tool
        # function's returned value is (validated like any other before it is sent).
        return _structured(outcome, owner=owner, output=output, modern=modern)
    responses = responses_of(outcome, owner)
    is_error = any(response.is_error for response in responses)
    structured_seen = [r for r in responses if r.has_structured]
    if len(structured_seen) > 1:
        raise HandlerResultError(f"{owner} returned more than one structured response")
    content: list[types.ContentBlock] = []
    structured: Any = None
    meta: dict[str, Any] = {}
    for response in responses:
        if response.meta:
            meta.update(response.meta)
        if response.has_structured:
            if is_error:
                structured = _json(response.structured_content)
                text = _text(structured)
            else:
                structured, text = _checked_output(output, response.structured_content)
            content.append(types.TextContent(type="text", text=text))
        content.extend(response.content)
    if not is_error and output is not None and not structured_seen:
        raise OutputContractError(
            f"{owner} declares a typed output and returned no structured content; "
            "a text-only success does not satisfy it: return McpResponse.structured(...)"
        )
    result = types.CallToolResult(content=content, is_error=is_error, meta=meta or None)
    if structured_seen and not is_error:
        result.structured_content = _on_the_wire(
            structured, owner=owner, output=output, modern=modern
        )
    return result


def of_contract(outcome: Any, output: Contract[Any]) -> bool:
    """Whether ``outcome`` is a value of the type ``output`` is the contract of: an instance
    of its class (a ``Schema``, a dataclass, ``int``, ``list`` for ``list[str]``).

    A bare ``dict`` is one only for a ``dict`` (or ``TypedDict``) contract: it is never
    converted for a ``Schema`` contract, however it is shaped. Responses and protocol
    results never are.
    """
    if isinstance(outcome, McpResponse | types.Result):
        return False
    if isinstance(outcome, list | tuple) and any(isinstance(o, McpResponse) for o in outcome):
        return False
    declared = output.type
    if is_typeddict(declared):
        return isinstance(outcome, dict)
    origin = typing.get_origin(declared) or declared
    return isinstance(origin, type) and isinstance(outcome, origin)


def _single(
    response: McpResponse, *, owner: str, output: Contract[Any] | None, modern: bool
) -> types.CallToolResult:
    """The common case, one successful response, without the merging loop."""
    if not response.has_structured:
        if output is not None:
            raise OutputContractError(
                f"{owner} declares a typed output and returned no structured content; "
                "a text-only success does not satisfy it: return McpResponse.structured(...)"
            )
        return types.CallToolResult(content=list(response.content))
    structured, text = _checked_output(output, response.structured_content)
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=text)]
    content.extend(response.content)
    return types.CallToolResult(
        content=content,
        structured_content=_on_the_wire(structured, owner=owner, output=output, modern=modern),
    )


def _structured(
    value: Any, *, owner: str, output: Contract[Any] | None, modern: bool
) -> types.CallToolResult:
    """A structured value alone: its JSON text as the one content block."""
    structured, text = _checked_output(output, value)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=_on_the_wire(structured, owner=owner, output=output, modern=modern),
    )


def _complete_result(
    result: types.CallToolResult, *, output: Contract[Any] | None, modern: bool
) -> types.CallToolResult:
    if result.is_error:
        return result
    if output is not None:
        if result.structured_content is None:
            raise OutputContractError("a complete result without structuredContent")
        value = result.structured_content
        if not modern and not output.is_object and isinstance(value, dict):
            value = value.get(LEGACY_WRAP_KEY, value)
        checked, _ = _checked_output(output, value)
        return result.model_copy(
            update={"structured_content": checked if modern else _legacy_structured(checked)}
        )
    if result.structured_content is not None:
        _representable(result.structured_content)
    if result.structured_content is not None and not modern:
        return result.model_copy(
            update={"structured_content": _legacy_structured(result.structured_content)}
        )
    return result


def _text(value: Any) -> str:
    return to_json(value).decode()


def error_result(text: str, meta: dict[str, Any] | None = None) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], is_error=True, meta=meta
    )


ARGUMENTS = "arguments"
"""How an ``Invalid tool arguments`` line names the whole arguments object (path ``""``)."""


def invalid_arguments(errors: Sequence[FieldError]) -> types.CallToolResult:
    """``Invalid tool arguments`` with field paths (a bounded summary: ``schemas.summarize``);
    never the rejected values."""
    lines = "\n".join(f"- {error.render(ARGUMENTS)}" for error in errors)
    return error_result(
        f"Invalid tool arguments\n{lines}",
        {"errors": [{"path": e.path, "message": e.message, "type": e.type} for e in errors]},
    )


def execution_failed(incident: str) -> types.CallToolResult:
    return error_result(f"Tool execution failed (incident {incident})", {"incident": incident})


def timed_out(seconds: float, incident: str) -> types.CallToolResult:
    """A tool call cancelled at its ``timeout``."""
    return error_result(
        f"Tool timed out after {seconds:g} s (incident {incident})", {"incident": incident}
    )


def input_timed_out(seconds: float) -> types.CallToolResult:
    return error_result(f"The client did not answer the request for input within {seconds:g} s")


def _blob_of(block: Any) -> tuple[str, str | None] | None:
    if isinstance(block, types.ImageContent | types.AudioContent):
        return block.data, block.mime_type
    return None


def resource_contents(
    outcome: Any, *, owner: str, uri: str, mime_type: str | None
) -> types.ReadResourceResult:
    """``resources/read`` contents from a handler's responses, at the URI that was read."""
    if isinstance(outcome, types.ReadResourceResult):
        return outcome
    contents: list[types.TextResourceContents | types.BlobResourceContents] = []
    for response in responses_of(outcome, owner):
        if response.is_error:
            raise HandlerResultError(f"{owner} returned an error response to a resource read")
        if response.has_structured:
            text = _text(_json(response.structured_content))
            contents.append(types.TextResourceContents(uri=uri, text=text, mime_type=mime_type))
        for block in response.content:
            if isinstance(block, types.TextContent):
                contents.append(
                    types.TextResourceContents(uri=uri, text=block.text, mime_type=mime_type)
                )
            elif isinstance(block, types.EmbeddedResource):
                embedded = block.resource
                if not str(embedded.uri):
                    embedded = embedded.model_copy(
                        update={"uri": uri, "mime_type": embedded.mime_type or mime_type}
                    )
                contents.append(embedded)
            elif (blob := _blob_of(block)) is not None:
                data, blob_mime = blob
                contents.append(
                    types.BlobResourceContents(uri=uri, blob=data, mime_type=blob_mime or mime_type)
                )
            else:
                raise HandlerResultError(
                    f"{owner} returned {type(block).__name__}, which a resource cannot contain"
                )
    return types.ReadResourceResult(contents=contents)


def prompt_messages(outcome: Any, *, owner: str, description: str | None) -> types.GetPromptResult:
    """``prompts/get`` messages: each content block of each response, with its role."""
    if isinstance(outcome, types.GetPromptResult):
        return outcome
    messages: list[types.PromptMessage] = []
    for response in responses_of(outcome, owner):
        blocks: list[types.ContentBlock] = list(response.content)
        if response.has_structured:
            text = _text(_json(response.structured_content))
            blocks.insert(0, types.TextContent(type="text", text=text))
        messages.extend(types.PromptMessage(role=response.role, content=b) for b in blocks)
    return types.GetPromptResult(description=description, messages=messages)
