"""State handles at run time: :class:`StateHandles`, the service that mints and closes
them, and :class:`HandleField`, the one field of a tool's input contract that takes one
back (found at compile time: a tool without one pays nothing per call).

A handle is an unguessable string bound to the caller who minted it (the identity key
the adapter counts calls by: the token's principal, else the peer's address); its calls
open their scope inside the handle's own session scope, so ``Lifetime.SESSION``
services are the handle's. The records live in a ``HandleStore``
(``mcp_adapter.stores.handles``).
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass

from container import Container, SessionScope
from mcp_adapter.declare.handles import StateHandle
from mcp_adapter.notifications.threads import loop_token, reach
from mcp_adapter.stores.handles import HandleStore, MemoryHandles

HANDLE_BYTES = 24
"""Random bytes of a minted handle (``secrets.token_urlsafe``: 32 characters)."""


@dataclass(frozen=True, slots=True)
class HandleField:
    """The field of a tool's input contract typed ``StateHandle``."""

    name: str
    """Its attribute on the validated payload."""
    wire: str
    """Its key in the call's arguments (the field's alias, else its name)."""


def handle_sessions(container: Container) -> Callable[[str], SessionScope]:
    """What builds the session scope of a handle: the container's, knowing the handle."""

    def session(handle: str) -> SessionScope:
        return container.session({StateHandle: StateHandle(handle)})

    return session


@dataclass(frozen=True, slots=True)
class HandleDesk:
    """What every ``StateHandles`` of one served app shares: the container whose sessions
    handles open, and the store that keeps them."""

    container: Container
    store: HandleStore

    @staticmethod
    def of(container: Container, store: HandleStore | None = None) -> HandleDesk:
        return HandleDesk(container, MemoryHandles() if store is None else store)


class StateHandles:
    """Mints and closes the state handles of the caller of the request being served.

    Inject it by type in a handler (or a scoped service). ``open()`` returns a new
    handle: give it to the client (in a result), which passes it back in a tool
    argument typed ``StateHandle``; the calls that carry it share its
    ``Lifetime.SESSION`` services until it is closed, or idle past its timeout.
    ``close(handle)`` closes one the caller holds: ``await handles.close(h)`` in async
    code, the plain call ``handles.close(h)`` in a sync handler; it does nothing for a
    handle that is not the caller's open one.
    """

    __slots__ = ("_call", "_desk", "_owner", "_token")

    def __init__(self, desk: HandleDesk, owner: Hashable, call: object = None) -> None:
        self._desk = desk
        self._owner = owner
        self._call = call
        """The SDK's context of the tool call minting (the store settles its handles);
        ``None`` off a tool call (a resource, a prompt): the in-memory store mints there,
        the Redis one refuses."""
        self._token = loop_token()

    def open(self) -> StateHandle:
        """A new handle of the caller, with a session scope of its own; raises
        ``TooManyHandles`` (a tool error) when the caller or the server holds too many."""
        handle = StateHandle(secrets.token_urlsafe(HANDLE_BYTES))
        session = handle_sessions(self._desk.container)(handle)
        self._desk.store.add(self._owner, handle, session, self._call)
        return handle

    def close(self, handle: str) -> Awaitable[None]:
        """Close ``handle``: its session services are finalized once the calls using it
        (this one too) are over."""
        if not isinstance(handle, str):
            raise TypeError(f"close() takes a handle (a string), not {handle!r}")
        return reach(self._token, self._desk.store.close, self._owner, handle)

    def __repr__(self) -> str:
        return "<StateHandles>"
