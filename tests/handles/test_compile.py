"""What compiling decides about state handles: the one field a tool takes a handle in, and
who may take the current ``StateHandle``; ``mcp-adapter check`` lists both sides."""

from __future__ import annotations

import pytest

from container import Container, Lifetime
from mcp_adapter import (
    CompileError,
    McpExtension,
    McpResponse,
    Platform,
    Server,
    StateHandle,
    StateHandles,
    Tool,
    compile_server,
    tool,
)
from schemas import Schema
from tests.handles.cart import Shop, shop_container
from tests.serving.harness import run_cli


class TaskHandle(Schema):
    cart: StateHandle


class TwoHandles(Schema):
    cart: StateHandle
    wishlist: StateHandle


class Both(Tool[TwoHandles]):
    name = "both"

    def handle(self, payload: TwoHandles) -> McpResponse:
        return McpResponse.text("")


class Session:
    def __init__(self, handle: StateHandle) -> None:
        self.handle = handle


class NoField(Tool):
    """Takes a service built from the current handle, but its calls carry none."""

    name = "no_field"

    def handle(self, session: Session) -> McpResponse:
        return McpResponse.text(session.handle)


def _problems(*tools: type[Tool], container: Container | None = None) -> str:
    class Broken(Server):
        name = "broken"

    Broken.tools = tools
    with pytest.raises(CompileError) as caught:
        compile_server(Broken, container or Container())
    return str(caught.value)


def test_two_handle_fields_are_a_compile_error_with_path_and_hint() -> None:
    text = _problems(Both)
    assert "path: tool 'both' -> TwoHandles" in text
    assert "2 StateHandle fields (cart, wishlist)" in text
    assert "hint: keep one StateHandle field" in text


def test_taking_the_current_handle_without_a_handle_field_is_a_compile_error() -> None:
    container = Container()
    container.bind(Session, Session, Lifetime.SESSION)
    text = _problems(NoField, container=container)
    assert "path: tool 'no_field' -> StateHandle" in text
    assert "its calls carry no handle" in text
    assert "hint: add a field typed StateHandle" in text


class Later(Tool[TaskHandle]):
    name = "later"
    task_support = "optional"

    async def handle(self, payload: TaskHandle) -> McpResponse:
        return McpResponse.text(payload.cart)


def test_a_task_tool_cannot_take_a_handle() -> None:
    text = _problems(Later)
    assert "path: tool 'later' -> TaskHandle" in text
    assert "cannot take a StateHandle" in text


class Functions(McpExtension):
    @tool
    async def peek(self, cart: StateHandle, handles: StateHandles) -> str:
        return cart


def test_a_function_tool_takes_a_handle_by_its_parameter() -> None:
    catalog = Platform([Functions()]).compile(Container())
    found = catalog.tools["peek"].handle
    assert found is not None
    assert (found.name, found.wire) == ("cart", "cart")
    schema = catalog.tools["peek"].modern.input_schema
    assert set(schema["properties"]) == {"cart"}
    assert schema["properties"]["cart"]["type"] == "string"


def test_check_lists_who_mints_and_who_takes_handles() -> None:
    assert compile_server(Shop, shop_container()).tools["add_item"].handle is not None
    done = run_cli(
        ["check", "tests.handles.cart:Shop", "--container", "tests.handles.cart:shop_container"]
    )
    assert done.returncode == 0, done.stdout + done.stderr
    notes = [line for line in done.stdout.splitlines() if line.startswith("note: tools that")]
    assert notes == [
        "note: tools that mint or close state handles (they take StateHandles): "
        "'open_cart', 'checkout', 'checkout_sync', 'drop', 'drop_sync'",
        "note: tools that take a state handle: 'add_item' (argument 'cart'), "
        "'checkout' (argument 'cart'), 'checkout_sync' (argument 'cart'), "
        "'visit_cart' (argument 'cart'), 'visit_maybe' (argument 'cart')",
    ]
