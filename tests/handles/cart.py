"""A shopping cart kept behind a state handle: the server the handle tests share."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from container import Container, Lifetime
from mcp_adapter import McpResponse, Server, StateHandle, StateHandles, Tool
from schemas import Schema


@dataclass
class Ledger:
    """What the test reads: every cart built and every cart finalized, by handle."""

    built: list[str] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)


class Cart:
    """Session-scoped: one per handle, shared by every call that carries it."""

    def __init__(self, handle: StateHandle) -> None:
        self.handle = handle
        self.items: list[str] = []


async def cart(handle: StateHandle, ledger: Ledger) -> AsyncIterator[Cart]:
    ledger.built.append(handle)
    yield Cart(handle)
    ledger.closed.append(handle)


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


class Shop(Server):
    name = "shop"
    tools = (OpenCart, AddItem, Checkout, CheckoutSync)


def shop_container(ledger: Ledger | None = None) -> Container:
    container = Container()
    container.instance(Ledger, Ledger() if ledger is None else ledger)
    container.bind(Cart, cart, Lifetime.SESSION)
    return container
