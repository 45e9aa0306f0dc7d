"""What a scope needs of the container that opened it, as a protocol: the scope does not
import the container, which imports the scope."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from container.graph import Node


class _CallPlan(Protocol):
    """The part of ``plans.CallPlan`` a scope uses."""

    def resolve_sync(
        self, ctx: Any, given_positional: int, given: Mapping[str, Any]
    ) -> tuple[list[Any], dict[str, Any]]: ...

    async def resolve_async(
        self, ctx: Any, given_positional: int, given: Mapping[str, Any]
    ) -> tuple[list[Any], dict[str, Any]]: ...


class Resolving(Protocol):
    """What a scope asks of the container that opened it (a ``Container``): its compiled
    builders, and the graph's nodes. A protocol, so that the scope does not import the
    container that imports it."""

    _sync: dict[Any, Any]
    _resolvers: dict[Any, Any]

    def builder(self, key: Any) -> Callable[[Any], Any]: ...

    def resolver(self, key: Any) -> tuple[bool, Callable[[Any], Any]]: ...

    def call_plan(self, fn: Callable[..., Any]) -> _CallPlan: ...

    def node(self, key: Any) -> Node: ...
