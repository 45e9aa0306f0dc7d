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
from typing import Any

import anyio
from mcp import MCPError, types

from mcp_adapter.declare.request import McpRequest, freeze
from mcp_adapter.declare.response import McpResponse
from mcp_adapter.input.state import accepted, envelope

MAX_INPUT_ROUNDS = 8
"""Elicitation rounds one 2025-11-25 call may go through before it is refused."""


@dataclasses.dataclass(frozen=True, slots=True)
class Asked:
    """A 2025-11-25 round that asked: the question, and the request it was asked in."""

    question: McpResponse
    request: McpRequest


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


def input_required(question: McpResponse) -> types.InputRequiredResult:
    """2026-07-28: the questions, and the state the retry brings back (sealed by the SDK)."""
    requests: dict[str, types.InputRequest] = {
        key: types.ElicitRequest(method="elicitation/create", params=form)
        for key, form in (question.input_requests or {}).items()
    }
    return types.InputRequiredResult(input_requests=requests, request_state=envelope(question))


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
