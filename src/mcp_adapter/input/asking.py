"""A call asking its client for input: whether it may, and how, in each era.

2026-07-28 answers with an ``input_required`` result (the question and a sealed
``requestState``; the client retries); 2025-11-25 asks through the SDK's
elicitation request on the same connection and calls the handler again with the
answers. Both need a client that declared the elicitation capability. In both eras
each round is a call of its own, in a scope of its own: a 2025-11-25 round that asks
ends (its scope closes) before the question goes out, and the answers come to a new
round, as a 2026-07-28 retry does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import anyio
from mcp import MCPError, types
from mcp.shared.message import ServerMessageMetadata
from pydantic import ValidationError

from mcp_adapter.declare.request import McpRequest, freeze
from mcp_adapter.declare.response import McpResponse
from mcp_adapter.input.resolution import (
    MAX_STATE_CHARS,
    NO_ROUND_STATE,
    Retry,
    RoundState,
    too_large,
)
from mcp_adapter.input.state import accepted, envelope


@dataclasses.dataclass(frozen=True, slots=True)
class Asked:
    """A 2025-11-25 round that asked: the handler's question (``McpResponse.elicit``) or
    its resolvers' ones, the request it was asked in, and its resolvers' progress."""

    question: McpResponse | None
    request: McpRequest
    requests: Mapping[str, types.InputRequest] = dataclasses.field(default_factory=dict)
    progress: RoundState = NO_ROUND_STATE


def asking(outcome: Any) -> McpResponse | None:
    """The response of ``outcome`` that asks for input, if one does."""
    if type(outcome) is McpResponse:
        return outcome if outcome.input_requests else None
    if isinstance(outcome, list | tuple):
        for response in outcome:
            if isinstance(response, McpResponse) and response.input_requests:
                return response
    return None


def missing_elicitation() -> MCPError:
    data = types.MissingRequiredClientCapabilityErrorData(
        required_capabilities=types.ClientCapabilities(elicitation=types.ElicitationCapability())
    )
    return MCPError(
        types.MISSING_REQUIRED_CLIENT_CAPABILITY,
        "This tool needs input and the client did not declare the elicitation capability",
        data.model_dump(by_alias=True, mode="json", exclude_none=True),
    )


def no_back_channel() -> MCPError:
    return MCPError(
        types.INVALID_REQUEST,
        "This tool needs input, and on 2025-11-25 this transport cannot send the server's "
        "elicitation request (stateless or JSON-response HTTP); serve it statefully with SSE "
        "responses, or call it with 2026-07-28",
    )


def input_required(
    question: McpResponse | None,
    progress: RoundState | None = None,
    requests: Mapping[str, types.InputRequest] | None = None,
) -> types.InputRequiredResult:
    """2026-07-28: the questions (the handler's, or its resolvers' ``requests``), and the
    state the retry brings back (sealed by the SDK)."""
    asked: dict[str, types.InputRequest] = dict(requests or {})
    if question is not None:
        for key, form in (question.input_requests or {}).items():
            asked[key] = types.ElicitRequest(method="elicitation/create", params=form)
    state = envelope(question, progress)
    if len(state) > MAX_STATE_CHARS:
        raise too_large()
    return types.InputRequiredResult(input_requests=asked, request_state=state)


_RESULTS: dict[str, type[types.Result]] = {
    "elicitation/create": types.ElicitResult,
    "sampling/createMessage": types.CreateMessageResultWithTools,
    "roots/list": types.ListRootsResult,
}


async def send(ctx: Any, request: types.InputRequest) -> Any:
    """2025-11-25: ask the client ``request`` over the back-channel of the call ``ctx``;
    its answer as JSON (``None`` when it is not even of the right shape)."""
    metadata = ServerMessageMetadata(related_request_id=ctx.request_id)
    try:
        result = await ctx.session.send_request(
            request, _RESULTS[request.method], metadata=metadata
        )
    except ValidationError:
        return None
    return result.model_dump(by_alias=True, exclude_none=True, mode="json")


async def elicit(
    ctx: Any, question: McpResponse, request: McpRequest, timeout: float
) -> McpRequest:
    """2025-11-25: ask through the SDK's elicitation request, answer as a retry would.

    Each answer is checked against the schema asked for (an invalid one is
    dropped, so the handler asks again); a client that does not answer within
    ``timeout`` seconds ends the call (``TimeoutError``).
    """
    answers: dict[str, Any] = {}
    for key, form in (question.input_requests or {}).items():
        with anyio.fail_after(timeout):
            result = await ctx.session.elicit_form(
                form.message, form.requested_schema, related_request_id=ctx.request_id
            )
        answer = accepted(
            result.model_dump(by_alias=True, exclude_none=True, mode="json"),
            form.requested_schema,
        )
        if answer is not None:
            answers[key] = answer
    return dataclasses.replace(
        request, input_responses=freeze(answers), request_state=question.request_state
    )


async def answered(ctx: Any, asked: Asked, timeout: float) -> tuple[McpRequest, Retry]:
    """2025-11-25: the next round's request and answers, once the client answered what a
    round asked (the handler's question, or its resolvers' ones, each within ``timeout``
    seconds: else ``TimeoutError``)."""
    if asked.question is not None:
        request = await elicit(ctx, asked.question, asked.request, timeout)
        return request, Retry(progress=asked.progress)
    answers: dict[str, Any] = {}
    for key, question in asked.requests.items():
        with anyio.fail_after(timeout):
            answers[key] = await send(ctx, question)
    return asked.request, Retry(answers, asked.progress)
