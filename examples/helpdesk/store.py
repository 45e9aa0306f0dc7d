"""The tickets of every tenant in one SQLite file; a ``Tickets`` sees its tenant's only."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

from examples.helpdesk.tenancy import Tenant

SCHEMA = """
CREATE TABLE IF NOT EXISTS tickets (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant TEXT NOT NULL,
    title TEXT NOT NULL
)
"""


class Database:
    """A singleton: where the file is. Each call opens a connection of its own."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, timeout=30)
        connection.execute(SCHEMA)
        return connection


def connection(database: Database) -> Iterator[sqlite3.Connection]:
    """A scoped connection, committed and closed when the call's scope closes."""
    opened = database.connect()
    try:
        yield opened
        opened.commit()
    finally:
        opened.close()


class Tickets:
    """A scoped repository bound to the call's tenant: every query filters by it."""

    def __init__(self, connection: sqlite3.Connection, tenant: Tenant) -> None:
        self.connection = connection
        self.tenant = tenant

    def open(self, title: str) -> int:
        cursor = self.connection.execute(
            "INSERT INTO tickets (tenant, title) VALUES (?, ?)", (self.tenant.id, title)
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def titles(self) -> list[str]:
        rows = self.connection.execute(
            "SELECT title FROM tickets WHERE tenant = ? ORDER BY id", (self.tenant.id,)
        )
        return [title for (title,) in rows]

    def title(self, number: int) -> str | None:
        row = self.connection.execute(
            "SELECT title FROM tickets WHERE id = ? AND tenant = ?", (number, self.tenant.id)
        ).fetchone()
        return None if row is None else str(row[0])
