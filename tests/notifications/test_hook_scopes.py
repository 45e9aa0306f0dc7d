"""A delivery opens a container scope per listener only for hooks that need one.

A hook that takes only the ``McpRequest`` (a method of a component built from
nothing) is asked with no scope at all: nothing could live in one, nothing is
finalized. A hook that takes a scoped service, or belongs to a component whose
constructor does, gets its own scope per listener and delivery, finalized after.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mcp.shared.subscriptions import ResourceUpdated

from container import Container
from mcp_adapter import McpRequest, McpResponse, Resource, Server, compile_server
from mcp_adapter.dispatch.scopes import Scopes
from mcp_adapter.notifications import Notifier
from tests.notifications.support import client, next_event
from tests.notifications.test_delivery import UPDATES, counting

pytestmark = pytest.mark.anyio

STREAMS = 2


class Audit:
    """A scoped service with a finalizer: what a scope per listener is for."""


class Ledger(Resource):
    """Its hook takes a scoped service."""

    uri = "ledger://audited"

    async def shouldRegister(self, request: McpRequest, audit: Audit) -> bool:
        return isinstance(audit, Audit) and request.uri == self.uri

    def handle(self) -> McpResponse:
        return McpResponse.text("audited")


class Built(Resource):
    """Its hook takes the request only, but building it takes a scoped service."""

    uri = "ledger://built"

    def __init__(self, audit: Audit) -> None:
        self.audit = audit

    async def shouldRegister(self, request: McpRequest) -> bool:
        return request.uri == self.uri

    def handle(self) -> McpResponse:
        return McpResponse.text("built")


class Plain(Resource):
    """Its hook takes the request only: no scope."""

    uri = "ledger://plain"

    async def shouldRegister(self, request: McpRequest) -> bool:
        return request.uri == self.uri

    def handle(self) -> McpResponse:
        return McpResponse.text("plain")


class SyncPlain(Plain):
    """The same as a plain ``def`` (a worker thread asks it): no scope either."""

    uri = "ledger://sync-plain"

    def shouldRegister(self, request: McpRequest) -> bool:  # type: ignore[override]
        return request.uri == self.uri


class LedgerServer(Server):
    name = "ledger"
    resources = (Ledger, Built, Plain, SyncPlain)


async def deliveries(uri: str, container: Container, scopes: list[int]) -> int:
    """Scopes opened while ``uri`` changes ``UPDATES`` times, heard by ``STREAMS`` streams."""
    catalog = compile_server(LedgerServer, container)
    async with (
        client(catalog, container, caller="ada") as ada,
        ada.listen(resource_subscriptions=[uri]) as first,
        ada.listen(resource_subscriptions=[uri]) as second,
    ):
        notifier = container.get(Notifier)
        before = len(scopes)
        for _ in range(UPDATES):
            await notifier.resource_updated(uri)
            for stream in (first, second):
                assert await next_event(stream) == ResourceUpdated(uri=uri)
        return len(scopes) - before


def audited(container: Container) -> tuple[list[Audit], list[Audit]]:
    opened: list[Audit] = []
    closed: list[Audit] = []

    def audit() -> Iterator[Audit]:
        made = Audit()
        opened.append(made)
        yield made
        closed.append(made)

    container.scoped(Audit, audit)
    return opened, closed


@pytest.mark.parametrize("uri", [Ledger.uri, Built.uri])
async def test_a_hook_needing_a_scoped_service_gets_its_own_scope_per_listener(
    monkeypatch: pytest.MonkeyPatch, uri: str
) -> None:
    container = Container()
    opened, closed = audited(container)
    scopes = counting(monkeypatch, Scopes, "scope")
    assert await deliveries(uri, container, scopes) == STREAMS * UPDATES
    assert len({id(audit) for audit in opened}) == STREAMS * UPDATES
    assert closed == opened  # each finalized with its scope


@pytest.mark.parametrize("uri", [Plain.uri, SyncPlain.uri])
async def test_a_hook_taking_only_the_request_is_asked_with_no_scope(
    monkeypatch: pytest.MonkeyPatch, uri: str
) -> None:
    container = Container()
    opened, _ = audited(container)
    scopes = counting(monkeypatch, Scopes, "scope")
    assert await deliveries(uri, container, scopes) == 0
    assert opened == []


def test_whether_hooks_need_a_scope_is_decided_at_compile_time() -> None:
    container = Container()
    audited(container)
    catalog = compile_server(LedgerServer, container)
    needs: dict[str, Any] = {
        uri: resource.scoped_hooks for uri, resource in catalog.resources.items()
    }
    assert needs == {Ledger.uri: True, Built.uri: True, Plain.uri: False, SyncPlain.uri: False}
