"""A server for load, concurrency and cancellation tests, with counters that see every scope.

Counters are plain attributes mutated on the event loop (and, for sync handlers,
under a lock): ``Ledger`` counts scopes opened and finalized, ``Settings``
counts how often its async factory ran.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import anyio
from mcp.server.auth.provider import AccessToken

from container import Container
from mcp_adapter import McpRequest, McpResponse, Server, Tool
from schemas import Schema


@dataclass
class Ledger:
    """What happened to every scope: opened, finalized (with how), live."""

    opened: int = 0
    finalized: list[int] = field(default_factory=list)
    live: set[int] = field(default_factory=set)
    cancelled: list[int] = field(default_factory=list)
    settings_built: int = 0
    started: dict[str, anyio.Event] = field(default_factory=dict)
    release: threading.Event = field(default_factory=threading.Event)
    """Set by a test to let slow handlers still running finish (thread-safe)."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    ids: itertools.count[int] = field(default_factory=itertools.count)


class RequestState:
    """Scoped: one per request, with an owner only its request may set."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.owner: str | None = None


class Unit:
    """Scoped, depends on ``RequestState``: must see its own request's state."""

    def __init__(self, state: RequestState) -> None:
        self.state = state


class Settings:
    """A singleton whose async factory is slow to run (a wide race window)."""

    def __init__(self, number: int) -> None:
        self.number = number


def build_container(ledger: Ledger) -> Container:
    container = Container()

    async def request_state() -> AsyncIterator[RequestState]:
        with ledger.lock:
            number = next(ledger.ids)
            ledger.opened += 1
            ledger.live.add(number)
        state = RequestState(number)
        try:
            yield state
        finally:
            await anyio.sleep(0)  # an awaiting finalizer: it must survive cancellation
            with ledger.lock:
                ledger.live.discard(number)
                ledger.finalized.append(number)

    async def settings() -> Settings:
        await anyio.sleep(0.01)
        ledger.settings_built += 1
        return Settings(ledger.settings_built)

    container.instance(Ledger, ledger)
    container.scoped(RequestState, request_state)
    container.scoped(Unit)
    container.singleton(Settings, settings)
    return container


class WorkInput(Schema):
    who: str
    yields: int = 3


class WorkTool(Tool[WorkInput]):
    """Claims its scope's state, yields to every other request, checks nothing changed."""

    name = "work"

    async def handle(
        self,
        payload: WorkInput,
        state: RequestState,
        unit: Unit,
        settings: Settings,
        request: McpRequest,
    ) -> McpResponse:
        assert state.owner is None, f"scope state already owned by {state.owner}"
        state.owner = payload.who
        for _ in range(payload.yields):
            await anyio.sleep(0)
        return McpResponse.structured(
            {
                "who": payload.who,
                "owner": state.owner,
                "same_state": unit.state is state,
                "state": state.number,
                "settings": settings.number,
                "arguments_who": request.arguments.get("who"),
                "subject": request.identity.subject if request.identity else None,
            }
        )


class SyncWorkTool(Tool[WorkInput]):
    """The same from a sync handler (it runs in a worker thread)."""

    name = "sync_work"

    def handle(self, payload: WorkInput, state: RequestState, request: McpRequest) -> McpResponse:
        state.owner = payload.who
        return McpResponse.structured(
            {
                "who": payload.who,
                "owner": state.owner,
                "state": state.number,
                "arguments_who": request.arguments.get("who"),
            }
        )


class SlowInput(Schema):
    key: str


class SlowTool(Tool[SlowInput]):
    """Signals that it started, then waits (far longer than any test) unless cancelled or
    released."""

    name = "slow"

    async def handle(self, payload: SlowInput, state: RequestState, ledger: Ledger) -> McpResponse:
        started = ledger.started.setdefault(payload.key, anyio.Event())
        started.set()
        try:
            with anyio.move_on_after(600):
                while not ledger.release.is_set():
                    await anyio.sleep(0.02)
        except BaseException:
            ledger.cancelled.append(state.number)
            raise
        return McpResponse.text("finished")


BLOCKERS = threading.Event()
"""Set by ``release``: the blocking sync handlers wait for it."""
BLOCK_LIMIT = 20.0
"""A guard against a hung test run only: a blocked handler gives up after this long."""


class BlockInput(Schema):
    who: str


class BlockTool(Tool[BlockInput]):
    """A sync handler that blocks its thread until ``release`` runs."""

    name = "block"

    def handle(self, payload: BlockInput) -> McpResponse:
        released = BLOCKERS.wait(BLOCK_LIMIT)
        return McpResponse.text("released" if released else "never released")


class ReleaseTool(Tool):
    """An async handler: if a blocked sync handler held the loop, it could never run."""

    name = "release"

    async def handle(self) -> McpResponse:
        BLOCKERS.set()
        return McpResponse.text("released them")


class LoadServer(Server):
    name = "load"
    tools = (WorkTool, SyncWorkTool, SlowTool, BlockTool, ReleaseTool)


class NamedTokens:
    """Any token ``user-<n>`` is valid; its subject is ``user-<n>``."""

    async def verify_token(self, token: str) -> AccessToken | None:
        if not token.startswith("user-"):
            return None
        return AccessToken(token=token, client_id="load", subject=token, scopes=["work"])
