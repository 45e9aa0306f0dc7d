"""An order tool with an MCP Apps view: clients that negotiated the extension render its
structured result in ``view.html``; the others read it as text.

The view is a ``Resource`` like any other: its services (here the shop's branding) are
injected, and it is read with ``resources/read``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from container import Container
from mcp_adapter import (
    APP_MIME_TYPE,
    McpRequest,
    McpResponse,
    NotFound,
    Resource,
    Server,
    Tool,
    ToolUI,
    supports_apps,
)
from schemas import Schema

VIEW_URI = "ui://orders/summary.html"
VIEW = Path(__file__).with_name("view.html")


class OrderQuery(Schema):
    order: str


class OrderLine(Schema):
    item: str
    quantity: int
    price: float


class OrderSummary(Schema):
    order: str
    lines: list[OrderLine]
    total: float
    currency: str


@dataclass(frozen=True)
class Branding:
    """The shop's name, as the view's title shows it."""

    shop: str = "Corner Shop"


class Orders:
    """Stands in for the order database."""

    def __init__(self) -> None:
        self._lines = {
            "A-1": [
                OrderLine(item="Tea", quantity=2, price=3.5),
                OrderLine(item="Mug", quantity=1, price=8.0),
            ]
        }

    def summary(self, order: str) -> OrderSummary:
        lines = self._lines.get(order)
        if lines is None:
            raise NotFound(f"No order {order}.")
        total = sum(line.quantity * line.price for line in lines)
        return OrderSummary(order=order, lines=lines, total=total, currency="EUR")


class OrderSummaryTool(Tool[OrderQuery, OrderSummary]):
    """Summarize an order: its lines and total."""

    name = "order_summary"
    ui = ToolUI(VIEW_URI)

    async def handle(
        self, payload: OrderQuery, orders: Orders, request: McpRequest
    ) -> list[McpResponse]:
        summary = orders.summary(payload.order)
        if supports_apps(request):  # the view shows the lines; a line of text is enough
            text = f"Order {summary.order}: {summary.total:.2f} {summary.currency}."
        else:  # no view: the text is the whole answer
            items = ", ".join(f"{line.quantity} x {line.item}" for line in summary.lines)
            text = f"Order {summary.order}: {items}; total {summary.total:.2f} {summary.currency}."
        return [McpResponse.text(text), McpResponse.structured(summary)]


class OrderSummaryView(Resource):
    """The HTML view of an order summary (an MCP App)."""

    uri = VIEW_URI
    mime_type = APP_MIME_TYPE

    def handle(self, branding: Branding) -> McpResponse:
        return McpResponse.text(
            VIEW.read_text(encoding="utf-8").replace("__TITLE__", branding.shop)
        )


class ShopServer(Server):
    name = "shop"
    tools = (OrderSummaryTool,)
    resources = (OrderSummaryView,)


def container() -> Container:
    built = Container()
    built.singleton(Orders)
    built.singleton(Branding)
    return built
