"""The helpdesk server: tools and a resource whose services are bound to the tenant.

Every handler, hook and constructor is synchronous, so each call runs on one worker
thread, its SQLite connection included (``docs/tools.md``: thread-bound components);
the tenant reaches that thread through the call's scope.
"""

from __future__ import annotations

import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from examples.helpdesk.store import Database, Tickets, connection
from examples.helpdesk.tenancy import Directory, Tenant, tenancy

from container import Container
from mcp_adapter import McpResponse, NotFound, Resource, Server, Tool
from mcp_adapter.layers import AccessLog, RateLimit
from schemas import Schema


class OpenInput(Schema):
    title: str


class OpenTicket(Tool[OpenInput]):
    """Open a ticket in your helpdesk."""

    def __init__(self, tickets: Tickets) -> None:
        self.tickets = tickets

    def authorize(self, tenant: Tenant) -> bool:
        return not tenant.suspended

    def handle(self, payload: OpenInput) -> McpResponse:
        return McpResponse.text(f"#{self.tickets.open(payload.title)}")


class ListTickets(Tool):
    """The titles of your helpdesk's tickets."""

    def __init__(self, tickets: Tickets) -> None:
        self.tickets = tickets

    def handle(self) -> McpResponse:
        return McpResponse.structured({"titles": self.tickets.titles()})


class Ticket(Resource):
    """One ticket of your helpdesk."""

    uri_template = "tickets://{number}"

    def __init__(self, tickets: Tickets) -> None:
        self.tickets = tickets

    def handle(self, number: int) -> McpResponse:
        title = self.tickets.title(number)
        if title is None:
            raise NotFound()  # another tenant's ticket reads exactly like a missing one
        return McpResponse.text(title)


class HelpdeskServer(Server):
    name = "helpdesk"
    tools = (OpenTicket, ListTickets)
    resources = (Ticket,)
    # AccessLog and RateLimit are named by their class: the container builds them when
    # the server compiles (RateLimit from the settings below), one per container
    middleware: ClassVar = (AccessLog, RateLimit, tenancy)


@dataclass(frozen=True)
class Settings:
    """The deployment's settings (read from the environment, a file, ...)."""

    calls_per_minute: int = 60


def rate_limit(settings: Settings) -> RateLimit:
    return RateLimit(settings.calls_per_minute, 60.0)


def build_container(
    path: Path, members: dict[str, Tenant], settings: Settings | None = None
) -> Container:
    container = Container()
    container.instance(Settings, settings or Settings())
    container.singleton(RateLimit, rate_limit)
    container.context(Tenant)
    container.instance(Directory, Directory(members))
    container.instance(Database, Database(path))
    container.scoped(sqlite3.Connection, connection)
    container.scoped(Tickets)
    return container


def demo_container() -> Container:
    """Two helpdesks in a file of the temporary directory (made on the first call)."""
    members = {"ada": Tenant("acme"), "bob": Tenant("globex")}
    return build_container(Path(tempfile.gettempdir()) / "mcp-adapter-helpdesk.db", members)
