"""A shopping cart kept behind a state handle: the server the handle tests share."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from container import Container, Lifetime
from mcp_adapter import McpResponse, Server, StateHandle, StateHandles, Tool
from schemas import Schema


@dataclass
class Ledger:
    """What the test reads: every cart built and every cart finalized, by handle."""

    built: list[str] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)
    finalized: Callable[[str], None] = lambda handle: None
    """Told of each cart finalized, once it is in ``closed`` (a test may wait on it)."""


class Cart:
    """Session-scoped: one per handle, shared by every call that carries it."""

    def __init__(self, handle: StateHandle) -> None:
        self.handle = handle
        self.items: list[str] = []


async def cart(handle: StateHandle, ledger: Ledger) -> AsyncIterator[Cart]:
    ledger.built.append(handle)
    yield Cart(handle)
    ledger.closed.append(handle)
    ledger.finalized(handle)


class OpenCart(Tool):
    name = "open_cart"

    def handle(self, handles: StateHandles) -> McpResponse:
        return McpResponse.text(handles.open())


class AddInput(Schema):
    cart: StateHandle
    item: str


class AddItem(Tool[AddInput]):
    name = "add_item"

    async def handle(self, payload: AddInput, cart: Cart) -> McpResponse:
        cart.items.append(payload.item)
        return McpResponse.text(",".join(cart.items))


class CartInput(Schema):
    cart: StateHandle


class Checkout(Tool[CartInput]):
    name = "checkout"

    async def handle(self, payload: CartInput, cart: Cart, handles: StateHandles) -> McpResponse:
        await handles.close(payload.cart)
        return McpResponse.text(f"bought {','.join(cart.items)}")


class CheckoutSync(Tool[CartInput]):
    """The same from a sync handler (a worker thread): ``close`` is a plain call."""

    name = "checkout_sync"

    def handle(self, payload: CartInput, cart: Cart, handles: StateHandles) -> McpResponse:
        handles.close(payload.cart)
        return McpResponse.text(f"bought {','.join(cart.items)}")


class Visits:
    """Session-scoped, needs no handle: one per 2025-11-25 session, or per handle."""

    def __init__(self) -> None:
        self.count = 0


class Visit(Tool):
    """No handle: its session is the MCP session's (2025-11-25), else the request's."""

    name = "visit"

    async def handle(self, visits: Visits) -> McpResponse:
        visits.count += 1
        return McpResponse.text(str(visits.count))


class VisitCart(Tool[CartInput]):
    """All sync (thread-bound: its scope opens on a worker thread), in the handle's session."""

    name = "visit_cart"

    def handle(self, payload: CartInput, visits: Visits) -> McpResponse:
        visits.count += 1
        return McpResponse.text(str(visits.count))


class MaybeCartInput(Schema):
    cart: StateHandle | None = None


class VisitMaybe(Tool[MaybeCartInput]):
    """An optional handle: with one, the handle's session; without, the call's own."""

    name = "visit_maybe"

    async def handle(self, payload: MaybeCartInput, visits: Visits) -> McpResponse:
        visits.count += 1
        return McpResponse.text(str(visits.count))


class DropInput(Schema):
    handle: str


class Drop(Tool[DropInput]):
    """Closes whatever string it is given: only the caller's own handles close."""

    name = "drop"

    async def handle(self, payload: DropInput, handles: StateHandles) -> McpResponse:
        await handles.close(payload.handle)
        return McpResponse.text("dropped")


class DropSync(Tool[DropInput]):
    """All sync (thread-bound): ``close`` from the call's worker thread."""

    name = "drop_sync"

    def handle(self, payload: DropInput, handles: StateHandles) -> McpResponse:
        handles.close(payload.handle)
        return McpResponse.text("dropped")


class Shop(Server):
    name = "shop"
    tools = (
        OpenCart,
        AddItem,
        Checkout,
        CheckoutSync,
        Visit,
        VisitCart,
        VisitMaybe,
        Drop,
        DropSync,
    )


def shop_container(ledger: Ledger | None = None) -> Container:
    container = Container()
    container.instance(Ledger, Ledger() if ledger is None else ledger)
    container.bind(Cart, cart, Lifetime.SESSION)
    container.bind(Visits, Visits, Lifetime.SESSION)
    return container
