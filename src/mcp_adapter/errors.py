"""Errors of the adapter: compile-time problems and the protocol errors it raises."""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import Sequence

from mcp import MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS

from container import Problem, ProblemKind, render_problems

logger = logging.getLogger("mcp_adapter")

AUTHORIZATION_ERROR = -32003
"""JSON-RPC error code for a component the caller may not use (``authorize()`` said no)."""
TOO_MANY_CALLS = -32004
"""JSON-RPC error code for a call refused because too many are in flight (``max_calls``,
``max_calls_per_client``); ``data`` names the limit and its value."""
RESOURCE_NOT_FOUND = -32002
"""JSON-RPC error code of reading an unknown resource in 2025-11-25 (retired in 2026-07-28,
which answers ``INVALID_PARAMS`` with ``data.uri``: see ``resource_not_found``)."""


class McpAdapterError(Exception):
    """Base class of every exception the adapter defines: what it raises to its callers
    (``CompileError``, ...) and the ``Refusal``s a handler raises for a safe answer."""


class CompileError(McpAdapterError):
    """A server declaration cannot be compiled; ``problems`` lists every reason at once,
    each with its path and hint (the container's ``Problem``, rendered the same way)."""

    def __init__(self, server_name: str, problems: Sequence[Problem]) -> None:
        self.server_name = server_name
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__(render_problems(f"Cannot compile {server_name}", self.problems))


def problem(path: Sequence[str], message: str, hint: str = "") -> Problem:
    """A compile-time problem that is not about the container (names, contracts, signatures)."""
    return Problem(ProblemKind.INVALID, tuple(path), message, hint)


def new_incident() -> str:
    """A short random id that ties a client-visible failure to a server-side log entry."""
    return secrets.token_hex(6)


_INCIDENT = "__mcp_incident__"


def incident_of(error: BaseException) -> str:
    """The incident id of ``error``: given once, the first time anyone asks, and kept on the
    exception, so middleware that saw the failure (an access log) and the answer the client
    gets name the same incident."""
    found = getattr(error, _INCIDENT, None)
    if isinstance(found, str):
        return found
    incident = new_incident()
    # an exception type with __slots__ cannot keep it: each asker then gets a fresh id
    with contextlib.suppress(AttributeError, TypeError):
        setattr(error, _INCIDENT, incident)
    return incident


class IncidentError(MCPError):
    """The protocol error ``-32603`` a failure is answered with: its message names the
    incident, which ``incident`` also holds (for middleware that logs it; never sent apart
    from the message)."""

    def __init__(self, what: str, incident: str) -> None:
        super().__init__(INTERNAL_ERROR, f"{what} (incident {incident})")
        self.incident = incident


def unknown(kind: str, name: str) -> MCPError:
    return MCPError(INVALID_PARAMS, f"Unknown {kind}: {name}")


def resource_not_found(uri: str, *, modern: bool) -> MCPError:
    """Reading ``uri`` found nothing: ``-32602`` in 2026-07-28, ``-32002`` in 2025-11-25.

    Both carry the URI as ``data.uri``.
    """
    return MCPError(
        INVALID_PARAMS if modern else RESOURCE_NOT_FOUND, "Resource not found", {"uri": uri}
    )


def forbidden(kind: str, name: str) -> MCPError:
    return MCPError(AUTHORIZATION_ERROR, f"Not authorized to use {kind} {name}")


class Refusal(McpAdapterError):
    """Raised by a handler, a hook or any service below them to give the caller a safe
    answer instead of an incident. Use one of the three kinds below."""


class ToolError(Refusal):
    """A business error whose message is safe to show the caller.

    From a tool: a tool error result (``isError: true``) with the message, as a
    returned ``McpResponse.error(message)`` would give (no incident is logged).
    From a resource, prompt or completion: the protocol error ``-32603`` with the
    message.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(Refusal):
    """What the caller asked for does not exist: the answer is exactly the one for an
    absent component (an unknown tool or prompt, ``-32602``; a resource: the era's
    not-found error, and a static resource that raises it falls through to a template
    that matches its URI, as a hidden one does)."""


class Forbidden(Refusal):
    """The caller may not use this: the answer of an ``authorize()`` that said no
    (``-32003``)."""


def refused(kind: str, name: str, refusal: Refusal) -> MCPError:
    """The protocol error a ``Refusal`` from a component other than a resource becomes."""
    if isinstance(refusal, NotFound):
        return unknown(kind, name)
    if isinstance(refusal, Forbidden):
        return forbidden(kind, name)
    return MCPError(INTERNAL_ERROR, str(refusal))


class HttpRequestUnavailable(McpAdapterError, RuntimeError):
    """A handler asked for the HTTP request on a transport that has none."""


class HandlerResultError(McpAdapterError, TypeError):
    """A handler returned something the adapter does not turn into a result."""


class OutputContractError(McpAdapterError, ValueError):
    """A successful result does not satisfy the tool's declared output contract."""


class ContextNotProvided(McpAdapterError, RuntimeError):
    """A request-stage layer declared a context value in ``provides`` and passed the call
    on without it (``Call.with_context``): the call fails with an incident."""
