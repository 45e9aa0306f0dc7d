"""Calls in flight, bounded per client and in all.

A ``tools/call``, ``resources/read``, ``prompts/get`` or ``completion/complete`` takes
a place when it starts and gives it back when it is answered, or, when it left sync
work running on a worker thread (past its timeout, or cancelled), once that work and
its scope's finalizers are done (``dispatch.threads``). A call beyond a limit is
refused at once with ``-32004`` and a message naming the limit and its value. The
client is the one per-client session limits count by
(:func:`mcp_adapter.compiled.context.client_of`: the verified token's principal, else
the peer's address).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from mcp import MCPError
from mcp.server.auth.provider import AccessToken

from mcp_adapter.compiled.context import client_of
from mcp_adapter.errors import TOO_MANY_CALLS


class CallsInFlight:
    """The places of a served server's calls: ``total`` at most, ``per_client`` each.

    ``None`` lifts a limit. Used on the event loop's thread only.
    """

    __slots__ = ("_count", "_mine", "per_client", "total")

    def __init__(self, total: int | None, per_client: int | None) -> None:
        for name, value in (("max_calls", total), ("max_calls_per_client", per_client)):
            if value is not None and (isinstance(value, bool) or value < 1):
                raise ValueError(f"{name} must be at least 1 or None")
        self.total = total
        self.per_client = per_client
        self._count = 0
        self._mine: dict[Hashable, int] = {}

    @property
    def count(self) -> int:
        """Places taken now."""
        return self._count

    def admit(self, ctx: Any, caller: AccessToken | None = None) -> Place:
        """A place for the call ``ctx`` describes, or ``MCPError(-32004)`` naming the limit."""
        key = client_of(ctx, caller)
        mine = self._mine.get(key, 0)
        if self.per_client is not None and mine >= self.per_client:
            raise _refused("max_calls_per_client", self.per_client, "for this client")
        if self.total is not None and self._count >= self.total:
            raise _refused("max_calls", self.total, "on this server")
        self._mine[key] = mine + 1
        self._count += 1
        return Place(self, key)

    def _leave(self, key: Hashable) -> None:
        self._count -= 1
        left = self._mine[key] - 1
        if left:
            self._mine[key] = left
        else:
            del self._mine[key]


class Place:
    """One call's place: given back when the call and whatever holds it besides (a worker
    thread it left running) have let go of it."""

    __slots__ = ("_calls", "_holders", "_key")

    def __init__(self, calls: CallsInFlight, key: Hashable) -> None:
        self._calls = calls
        self._key = key
        self._holders = 1

    def hold(self) -> None:
        self._holders += 1

    def release(self) -> None:
        self._holders -= 1
        if not self._holders:
            self._calls._leave(self._key)


def _refused(limit: str, value: int, where: str) -> MCPError:
    return MCPError(
        TOO_MANY_CALLS,
        f"Too many calls in flight {where} ({limit} is {value}); retry when one has finished",
        {"limit": limit, "value": value},
    )
