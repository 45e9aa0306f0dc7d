"""``AccessLog``: one structured log record per call, never its arguments or its result."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, fields
from typing import Any, Final, Literal

from mcp import MCPError, types

from mcp_adapter.declare.middleware import Call, Next, Stage, checked_stage
from mcp_adapter.declare.request import McpRequest
from mcp_adapter.declare.response import McpResponse
from mcp_adapter.errors import IncidentError, Refusal, incident_of
from mcp_adapter.interrupts import cancelled_for_real
from mcp_adapter.tasks.wire import CreateTaskResult

Outcome = Literal["ok", "error", "refused", "failed", "cancelled", "task"]
"""How a call ended, as the layer saw it (see ``AccessLog``)."""


@dataclass(frozen=True, slots=True)
class AccessRecord:
    """The attributes of one ``AccessLog`` record, typed (``None`` when they do not apply).

    ``AccessRecord.of(record)`` reads them off a ``logging.LogRecord`` the layer wrote, for
    handlers and filters that would otherwise ``getattr`` untyped ``extra=`` attributes.
    """

    method: str
    component: str | None
    outcome: Outcome
    duration_ms: float
    subject: str | None
    request_id: str | int | None
    incident: str | None
    refusal: str | None
    error_type: str | None
    error_code: int | None

    @classmethod
    def of(cls, record: logging.LogRecord) -> AccessRecord:
        """The access attributes of ``record``; ``ValueError`` for a record ``AccessLog``
        did not write (one without them)."""
        missing = [name for name in FIELDS if not hasattr(record, name)]
        if missing:
            raise ValueError(
                f"log record {record.name!r} ({record.getMessage()[:80]!r}) is not an access "
                f"record: it has no {', '.join(missing)}; hint: read records of the "
                "AccessLog layer's logger (mcp_adapter.access unless configured)"
            )
        return cls(*(getattr(record, name) for name in FIELDS))


FIELDS: Final = tuple(field.name for field in fields(AccessRecord))
"""The attributes every access record carries (``None`` when they do not apply)."""


def outcome_of(value: Any) -> Outcome:
    """``"error"`` for an error answer (``McpResponse.error(...)``, a list holding one, a
    ``CallToolResult`` with ``isError``), ``"failed"`` for a tool result that names an
    incident (``Tool execution failed``, a timeout), ``"task"`` for the handle of a task
    the call started (how the task ends is not the call's answer), else ``"ok"``.

    >>> outcome_of(McpResponse.error("no such order")), outcome_of("a plain value")
    ('error', 'ok')
    """
    if isinstance(value, McpResponse):
        return "error" if value.is_error else "ok"
    if isinstance(value, types.CallToolResult):
        if not value.is_error:
            return "ok"
        return "failed" if _incident_in(value) is not None else "error"
    if isinstance(value, CreateTaskResult):
        return "task"
    if isinstance(value, list | tuple) and any(
        isinstance(item, McpResponse) and item.is_error for item in value
    ):
        return "error"
    return "ok"


def _incident_in(result: types.CallToolResult) -> str | None:
    incident = (result.meta or {}).get("incident")
    return incident if isinstance(incident, str) else None


class AccessLog:
    """Middleware: one record per call on the logger ``mcp_adapter.access`` (or ``logger``),
    at ``level`` (INFO).

    Each record has a readable message (``tools/call 'add' ok in 1.2 ms by ada``) and these
    attributes (``extra=``; see ``FIELDS``): ``method``, ``component`` (``Call.component``:
    the tool's or prompt's name, a resource's URI template, never the URI read, whose
    variables are the call's arguments; ``""`` for a listing, ``None`` for a name the
    server does not know), ``outcome``, ``duration_ms``, ``subject``
    (``McpRequest.identity.subject``, ``None`` when anonymous), ``request_id``, and, by
    outcome, ``incident``, ``refusal``, ``error_type`` or ``error_code``.

    Outcomes: ``ok``; ``error`` (an error answer: the handler's, or invalid arguments);
    ``refused`` (a ``Refusal`` such as ``ToolError``, or a protocol ``MCPError``:
    ``refusal`` names its class, ``error_code`` a protocol error's code); ``failed`` (an
    answer naming an incident: ``incident`` is the id the client's answer names, and
    ``error_type`` the exception's class when the layer saw it raised, never its
    message); ``cancelled`` (the client cancelled or disconnected); ``task`` (the call
    started a task and answered its handle: the task's own end is read with
    ``tasks/get``; its id, the caller's secret, is never logged).

    ``stage="request"`` (the default) logs every request of the server as it is answered:
    unknown names, calls a hook hides or refuses, invalid arguments, and a result the
    dispatcher failed to build, with the incident id. ``stage="call"`` logs calls that
    reached the handler's stage, seeing the handler's value (the one way to put it on a
    single component).
    """

    __slots__ = ("level", "logger", "stage")

    def __init__(
        self,
        logger: logging.Logger | str = "mcp_adapter.access",
        level: int = logging.INFO,
        *,
        stage: Stage = "request",
    ) -> None:
        self.logger = logger if isinstance(logger, logging.Logger) else logging.getLogger(logger)
        self.level = level
        self.stage = checked_stage(stage, "AccessLog")

    async def __call__(self, call: Call, call_next: Next, request: McpRequest) -> Any:
        if not self.logger.isEnabledFor(self.level):
            return await call_next(call)
        started = time.perf_counter()
        try:
            value = await call_next(call)
        except IncidentError as failure:
            self._log(call, request, started, "failed", incident=failure.incident)
            raise
        except MCPError as refusal:
            code = refusal.error.code
            self._log(call, request, started, "refused", refusal="MCPError", code=code)
            raise
        except Refusal as refusal:
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
        outcome = outcome_of(value)
        if outcome == "failed" and isinstance(value, types.CallToolResult):
            self._log(call, request, started, outcome, incident=_incident_in(value))
        else:
            self._log(call, request, started, outcome)
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
        code: int | None = None,
    ) -> None:
        duration = (time.perf_counter() - started) * 1000
        identity = request.identity
        subject = identity.subject if identity is not None else None
        component = call.component
        if component is None:
            message, args = ["%s (unknown) %s in %.1f ms"], [call.method, outcome, duration]
        elif component:
            message, args = ["%s %r %s in %.1f ms"], [call.method, component, outcome, duration]
        else:
            message, args = ["%s %s in %.1f ms"], [call.method, outcome, duration]
        _detail(message, args, "by %s", subject)
        _detail(message, args, "(incident %s)", incident)
        why = refusal or error
        _detail(message, args, "(%s)", why if code is None else f"{why} {code}")
        self.logger.log(
            self.level,
            " ".join(message),
            *args,
            extra={
                "method": call.method,
                "component": component,
                "outcome": outcome,
                "duration_ms": duration,
                "subject": subject,
                "request_id": request.id,
                "incident": incident,
                "refusal": refusal,
                "error_type": error,
                "error_code": code,
            },
        )


def _detail(message: list[str], args: list[Any], text: str, value: str | None) -> None:
    if value is not None:
        message.append(text)
        args.append(value)
