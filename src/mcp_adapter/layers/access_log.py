"""``AccessLog``: one structured log record per call, never its arguments or its result."""

from __future__ import annotations

import logging
import time
from typing import Any, Final, Literal

from mcp import MCPError, types

from mcp_adapter.declare.middleware import Call, Next
from mcp_adapter.declare.request import McpRequest
from mcp_adapter.declare.response import McpResponse
from mcp_adapter.errors import Refusal, incident_of
from mcp_adapter.interrupts import cancelled_for_real

Outcome = Literal["ok", "error", "refused", "failed", "cancelled"]
"""How a call ended, as the layer saw it (see ``AccessLog``)."""

FIELDS: Final = (
    "method",
    "component",
    "outcome",
    "duration_ms",
    "subject",
    "request_id",
    "incident",
    "refusal",
    "error_type",
)
"""The attributes every access record carries (``None`` when they do not apply)."""


def outcome_of(value: Any) -> Outcome:
    """``"error"`` for an error answer the handler returned (``McpResponse.error(...)``, a
    list holding one, a ``CallToolResult`` with ``isError``), else ``"ok"``.

    >>> outcome_of(McpResponse.error("no such order")), outcome_of("a plain value")
    ('error', 'ok')
    """
    if isinstance(value, McpResponse):
        return "error" if value.is_error else "ok"
    if isinstance(value, types.CallToolResult):
        return "error" if value.is_error else "ok"
    if isinstance(value, list | tuple) and any(
        isinstance(item, McpResponse) and item.is_error for item in value
    ):
        return "error"
    return "ok"


class AccessLog:
    """Middleware: one record per call on the logger ``mcp_adapter.access`` (or ``logger``),
    at ``level`` (INFO).

    Each record has a readable message (``tools/call 'add' ok in 1.2 ms by ada``) and these
    attributes (``extra=``; see ``FIELDS``): ``method``, ``component`` (the tool's or
    prompt's name, a resource's URI, ``""`` for a listing), ``outcome``, ``duration_ms``,
    ``subject`` (``McpRequest.identity.subject``, ``None`` when anonymous), ``request_id``,
    and, by outcome, ``incident``, ``refusal`` or ``error_type``.

    Outcomes: ``ok``; ``error`` (the handler returned an error answer); ``refused`` (a
    ``Refusal`` such as ``ToolError``, or a protocol ``MCPError``; ``refusal`` names its
    class); ``failed`` (any other exception: ``incident`` is the id the client's answer
    names, from ``incident_of``; ``error_type`` its class, never its message); ``cancelled``
    (the client cancelled, disconnected, or the call hit its timeout).

    Put it first in ``Server.middleware`` to see what the layers after it refuse. It sees
    the handler's value before it becomes a result: a result the dispatcher then fails to
    build (a value breaking the output contract) is logged ``ok`` while the client gets an
    incident, logged by the dispatcher on ``mcp_adapter``.
    """

    __slots__ = ("level", "logger")

    def __init__(
        self, logger: logging.Logger | str = "mcp_adapter.access", level: int = logging.INFO
    ) -> None:
        self.logger = logger if isinstance(logger, logging.Logger) else logging.getLogger(logger)
        self.level = level

    async def __call__(self, call: Call, call_next: Next, request: McpRequest) -> Any:
        if not self.logger.isEnabledFor(self.level):
            return await call_next(call)
        started = time.perf_counter()
        try:
            value = await call_next(call)
        except (Refusal, MCPError) as refusal:
            self._log(call, request, started, "refused", refusal=type(refusal).__name__)
            raise
        except Exception as exc:
            self._failed(call, request, started, exc)
            raise
        except BaseException as exc:
            if cancelled_for_real(exc):  # as the dispatcher decides it
                self._log(call, request, started, "cancelled")
            else:
                self._failed(call, request, started, exc)
            raise
        self._log(call, request, started, outcome_of(value))
        return value

    def _failed(self, call: Call, request: McpRequest, started: float, exc: BaseException) -> None:
        incident = incident_of(exc)
        self._log(call, request, started, "failed", incident=incident, error=type(exc).__name__)

    def _log(
        self,
        call: Call,
        request: McpRequest,
        started: float,
        outcome: Outcome,
        *,
        incident: str | None = None,
        refusal: str | None = None,
        error: str | None = None,
    ) -> None:
        duration = (time.perf_counter() - started) * 1000
        identity = request.identity
        subject = identity.subject if identity is not None else None
        message = ["%s %r %s in %.1f ms"] if call.name else ["%s%s %s in %.1f ms"]
        args: list[Any] = [call.method, call.name, outcome, duration]
        _detail(message, args, "by %s", subject)
        _detail(message, args, "(incident %s)", incident)
        _detail(message, args, "(%s)", refusal or error)
        self.logger.log(
            self.level,
            " ".join(message),
            *args,
            extra={
                "method": call.method,
                "component": call.name,
                "outcome": outcome,
                "duration_ms": duration,
                "subject": subject,
                "request_id": request.id,
                "incident": incident,
                "refusal": refusal,
                "error_type": error,
            },
        )


def _detail(message: list[str], args: list[Any], text: str, value: str | None) -> None:
    if value is not None:
        message.append(text)
        args.append(value)
