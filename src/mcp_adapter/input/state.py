"""Input requests: the state the adapter keeps around a handler's question, and the answers
it lets through to the handler.

A handler asks with ``McpResponse.elicit(...)``. On 2026-07-28 the question goes to
the client in an ``input_required`` result whose ``requestState`` is this module's
envelope: the handler's own ``state`` and every question asked (key and requested
schema). The SDK's ``RequestStateBoundary`` (installed by :func:`mcp_adapter.serving.lowlevel.
build_sdk_server`) seals it on the way out (encrypted; bound to the caller, the
method, the component and the arguments; with an expiry) and opens it on the retry,
refusing anything it did not seal. So on a retry the envelope names exactly the
questions this server asked; an answer to another key, or one outside the requested
schema, is dropped before the handler sees it, and the handler asks again. Answers
that arrive without a state are no answers at all.

On 2025-11-25 the adapter asks the client itself; the same check applies to what the
client answers, and ``inputResponses`` a client puts into ``tools/call`` are ignored.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from typing import Any

from mcp import MCPError, types

from mcp_adapter.declare.response import McpResponse
from mcp_adapter.input.questions import meets
from mcp_adapter.input.resolution import Retry, RoundState

_VERSION = 3
_READS = frozenset({1, 2, 3})
_ACTIONS = frozenset({"accept", "decline", "cancel"})
INVALID_STATE = "Invalid or expired requestState"
"""The SDK boundary's own wording for a state it refuses: one answer for every cause."""


def questions(asking: McpResponse) -> dict[str, dict[str, Any]]:
    """What ``asking`` asks: each key with the JSON Schema its answer must meet."""
    return {key: dict(form.requested_schema) for key, form in (asking.input_requests or {}).items()}


def envelope(asking: McpResponse | None, progress: RoundState | None = None) -> str:
    """The plaintext ``requestState`` of an ``input_required`` result (the SDK seals it):
    the handler's question and state (``McpResponse.elicit``), and the resolvers'
    progress (recorded outcomes pinned to their questions, the questions of this round,
    the rounds so far); and the round's own id and the time it was minted, by which
    its retry is taken once (``input.single_use``)."""
    value: dict[str, Any] = {"v": _VERSION, "n": secrets.token_urlsafe(16), "t": time.time()}
    if asking is not None:
        value["s"] = asking.request_state
        value["q"] = questions(asking)
    if progress is not None:
        value["o"] = dict(progress.recorded)
        value["k"] = dict(progress.asked)
        value["r"] = progress.rounds
    return json.dumps(value, separators=(",", ":"))


def round_of(state: Any) -> tuple[str, float] | None:
    """``(id, minted)`` of the round whose opened ``requestState`` is ``state``: its random
    id and the time (seconds since the epoch) it was minted; ``None`` when the state is
    no envelope of this version (one minted before rounds had ids included)."""
    value = _opened(state)
    if value is None:
        return None
    found, minted = value.get("n"), value.get("t")
    if not isinstance(found, str) or not found or not isinstance(minted, int | float):
        return None
    return found, float(minted)


def retried_progress(params: Mapping[str, Any]) -> Retry:
    """The resolvers' part of a 2026-07-28 retry: the client's answers (checked later,
    against the very question each resolver asks again) and the sealed progress."""
    state = params.get("requestState")
    if state is None:
        return Retry()
    opened = _opened(state)
    if opened is None:
        raise MCPError(types.INVALID_PARAMS, INVALID_STATE, {"reason": "invalid_request_state"})
    recorded, asked, rounds = opened.get("o", {}), opened.get("k", {}), opened.get("r", 0)
    if not (isinstance(recorded, dict) and isinstance(asked, dict) and isinstance(rounds, int)):
        raise MCPError(types.INVALID_PARAMS, INVALID_STATE, {"reason": "invalid_request_state"})
    given = params.get("inputResponses")
    answers = (
        {key: given[key] for key in asked if key in given} if isinstance(given, Mapping) else {}
    )
    progress = RoundState(
        {key: entry for key, entry in recorded.items() if isinstance(entry, dict)},
        {key: value for key, value in asked.items() if isinstance(value, str)},
        rounds,
    )
    return Retry(answers, progress)


def accepted(answer: Any, schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """``answer`` as the handler may see it, or ``None`` when it is no valid answer.

    ``{"action": "accept", "content": {...}}`` with content that meets ``schema``,
    or ``{"action": "decline"}`` / ``{"action": "cancel"}`` (any content dropped).
    """
    if not isinstance(answer, Mapping):
        return None
    action = answer.get("action")
    if action not in _ACTIONS:
        return None
    if action != "accept":
        return {"action": action}
    content = answer.get("content")
    if not isinstance(content, Mapping) or not meets(content, schema):
        return None
    return {"action": "accept", "content": dict(content)}


def retried_answers(params: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """``(input_responses, request_state)`` of a 2026-07-28 retry, as the handler sees them.

    ``params["requestState"]`` is the envelope the SDK's boundary has verified and
    opened; only answers to the questions it names, and valid for them, are kept.
    """
    state = params.get("requestState")
    if state is None:
        return {}, None
    opened = _open(state)
    if opened is None:
        raise MCPError(types.INVALID_PARAMS, INVALID_STATE, {"reason": "invalid_request_state"})
    handler_state, asked = opened
    given = params.get("inputResponses")
    answers: dict[str, Any] = {}
    if isinstance(given, Mapping):
        for key, schema in asked.items():
            answer = accepted(given.get(key), schema)
            if answer is not None:
                answers[key] = answer
    return answers, handler_state


def _opened(state: Any) -> dict[str, Any] | None:
    if not isinstance(state, str):
        return None
    try:
        value = json.loads(state)
    except ValueError:
        return None
    if not isinstance(value, dict) or value.get("v") not in _READS:
        return None
    return value


def _open(state: Any) -> tuple[str | None, dict[str, Mapping[str, Any]]] | None:
    value = _opened(state)
    if value is None:
        return None
    handler_state, asked = value.get("s"), value.get("q", {})
    if not (handler_state is None or isinstance(handler_state, str)):
        return None
    if not isinstance(asked, dict) or not all(isinstance(s, dict) for s in asked.values()):
        return None
    return handler_state, asked
