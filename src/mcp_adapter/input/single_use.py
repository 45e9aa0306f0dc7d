"""Each round of input requests is answered once: the SDK's ``RequestStateBoundary``, and a
ledger of the rounds already answered.

The boundary seals every 2026-07-28 ``requestState`` the server hands out and opens the
one a retry brings back, refusing any it did not seal, or sealed for another caller,
method, component, arguments or audience, or expired. It does not make a state single
use: the same retry (same caller, arguments, state and answers) sent again would run
the call again, and a confirmed action with it. So once the boundary has opened a
state, the round's id (``input.state.round_of``, minted into every envelope) is
recorded in a :class:`~mcp_adapter.stores.RoundLedger`, for as long as the state could
still be opened; a state whose round is recorded already is refused exactly as a forged
one is, ``-32602 Invalid or expired requestState``, before anything else runs. A state
is spent by the retry that brings it, whatever comes of that retry: an answer, another
round (whose new state is good for one retry in turn), or an error.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Coroutine
from typing import Any, NoReturn

from mcp import MCPError, types
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp_types.methods import INPUT_REQUIRED_METHODS, is_input_required

from mcp_adapter.errors import IncidentError, incident_of
from mcp_adapter.input.questions import short_digest
from mcp_adapter.input.state import INVALID_STATE, round_of
from mcp_adapter.stores.rounds import LedgerFull, LedgerUnavailable, RoundLedger

logger = logging.getLogger(__name__)

CLOCK_SKEW = 60.0
"""Seconds a round stays recorded past its state's expiry: replicas' clocks may disagree
(the SDK's boundary allows a state minted up to as much in the future)."""


def single_use_state(
    security: RequestStateSecurity, ledger: RoundLedger, *, audience: str | None
) -> ServerMiddleware[Any]:
    """Server middleware: the SDK's ``RequestStateBoundary`` under ``security`` (audience
    ``audience``), and each state it opens good for one retry, recorded in ``ledger``.

    Put on ``Server.middleware`` in the boundary's place. A plain function, not an
    object with ``__call__``; the boundary runs only where it has work: on a request
    that brings a state (which it opens) and on an ``input_required`` answer (whose
    state it seals). Any other request or answer passes it untouched, as it would
    through the boundary, without its checks.
    """
    sealed = RequestStateBoundary(security, default_audience=audience).__call__
    spend = Rounds(ledger, security.ttl).spend

    async def sealing(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """A request that brings no state: only an ``input_required`` answer goes through
        the boundary, which seals the state it hands out."""
        result = await call_next(ctx)
        if type(result) is dict and result.get("resultType") != "input_required":
            return result  # the common answer, told apart without the boundary's checks
        if not is_input_required(result):
            return result
        return await sealed(ctx, functools.partial(_answered, result))

    def single_use(
        ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> Coroutine[Any, Any, HandlerResult]:
        if ctx.method not in INPUT_REQUIRED_METHODS:
            # the boundary passes these on untouched; the rest of the chain is the SDK's
            # (a coroutine function), typed ``Awaitable`` by ``CallNext``
            return call_next(ctx)  # type: ignore[return-value]
        params = ctx.params
        if params is None or params.get("requestState") is None:
            return sealing(ctx, call_next)
        return sealed(ctx, functools.partial(spend, call_next))

    return single_use


async def _answered(result: HandlerResult, ctx: ServerRequestContext[Any, Any]) -> HandlerResult:
    """The boundary's ``call_next`` for an answer already given (to be sealed)."""
    return result


class Rounds:
    """Spends the round of each state the boundary opened, in ``ledger``, for the state's
    remaining lifetime (``ttl`` after it was minted) and :data:`CLOCK_SKEW`."""

    __slots__ = ("ledger", "ttl")

    def __init__(self, ledger: RoundLedger, ttl: float) -> None:
        self.ledger = ledger
        self.ttl = ttl

    async def spend(self, call_next: CallNext, ctx: ServerRequestContext[Any, Any]) -> Any:
        """Past the boundary: ``ctx.params["requestState"]`` is the plaintext it opened."""
        assert ctx.params is not None
        found = round_of(ctx.params["requestState"])
        if found is None:
            _refuse(ctx.method, "no round id")
        round_id, minted = found
        left = minted + self.ttl - time.time()
        try:
            first = await self.ledger.consume(short_digest(round_id), max(left, 0.0) + CLOCK_SKEW)
        except (LedgerFull, LedgerUnavailable) as exc:
            incident = incident_of(exc)
            logger.error(
                "requestState on %s not taken: %s (incident %s)", ctx.method, exc, incident
            )
            raise IncidentError(
                "The answers could not be taken; call again later", incident
            ) from None
        if not first:
            _refuse(ctx.method, "replayed: the round was answered already")
        return await call_next(ctx)


def _refuse(method: str, reason: str) -> NoReturn:
    """The boundary's own answer to a state it refuses; the reason to the log only."""
    logger.warning("requestState rejected on %s: %s", method, reason)
    raise MCPError(types.INVALID_PARAMS, INVALID_STATE, {"reason": "invalid_request_state"})
