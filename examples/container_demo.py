"""A short tour of the container: bindings, lifetimes, scopes and finalizers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Protocol

from container import Container


class Clock(Protocol):
    def now(self) -> str: ...


class FixedClock:
    def now(self) -> str:
        return "2026-11-29T12:00:00Z"


class Connection:
    def __init__(self) -> None:
        self.open = True


async def connect() -> AsyncIterator[Connection]:
    connection = Connection()
    print("  connection opened")
    yield connection
    connection.open = False
    print("  connection closed (finalizer)")


class Repository:
    def __init__(self, connection: Connection, clock: Clock) -> None:
        self.connection = connection
        self.clock = clock


async def main() -> None:
    container = Container()
    container.singleton(Clock, FixedClock)
    container.scoped(Connection, connect)
    container.scoped(Repository)
    container.validate()
    print("validated: no problems")
    for request in (1, 2):
        async with container.scope() as scope:
            repo = await scope.aget(Repository)
            same = repo is await scope.aget(Repository)
            print(f"request {request}: repo shared in scope={same}, clock={repo.clock.now()}")
    await container.aclose()


if __name__ == "__main__":
    asyncio.run(main())
