"""The guard around every call: failures become safe answers, and a call past its
timeout is cancelled and answered as a failure."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
from mcp import MCPError

from mcp_adapter.dispatch import telemetry
from mcp_adapter.dispatch.telemetry import Activity
from mcp_adapter.errors import Refusal, incident_of, logger, new_incident, refused
from mcp_adapter.interrupts import cancelled_for_real

T = TypeVar("T")


class Guard:
    """Part of the dispatcher (``core.DispatchCore``): runs a call so that no failure
    escapes it but as a protocol error or a safe answer, logged under an incident id."""

    _otel: Activity | None
    """``None`` when telemetry is switched off (``telemetry.switch``)."""

    async def _guarded(
        self,
        what: str,
        name: str,
        call: Callable[[], Awaitable[T]],
        failure: Callable[[str], T],
        timeout: float | None = None,
    ) -> T:
        """Run ``call``; protocol errors pass, a ``Refusal`` becomes its safe answer, anything
        else is logged with an incident id; past ``timeout`` seconds it is cancelled, its
        scope closed, and answered as a failure."""
        try:
            if timeout is None:
                return await call()
            with anyio.move_on_after(timeout):
                return await call()
            return failure(self._timed_out(what, name, timeout))
        except MCPError:
            raise
        except Refusal as refusal:
            raise refused(what, name, refusal) from None
        except Exception as exc:  # noqa: BLE001 - every failure becomes a safe answer
            return failure(self._incident(what, name, exc))
        except BaseException as exc:
            if cancelled_for_real(exc):
                raise
            return failure(self._incident(what, name, exc))

    def _incident(self, what: str, name: str, error: BaseException) -> str:
        """Log ``error`` with its traceback under its incident id, and return the id."""
        incident = incident_of(error)
        logger.error("%s %r failed (incident %s)", what, name, incident, exc_info=error)
        if self._otel is not None:
            telemetry.incident(incident)
        return incident

    def _timed_out(self, what: str, name: str, timeout: float) -> str:
        """Log that a call was cancelled at its timeout, and return the incident id."""
        incident = new_incident()
        logger.error("%s %r timed out after %g s (incident %s)", what, name, timeout, incident)
        if self._otel is not None:
            telemetry.incident(incident)
        return incident
