"""The demo's container: where ``GreetingService`` is bound."""

from __future__ import annotations

from examples.demo.services import GreetingService, NameFormatter

from container import Container


def build_container() -> Container:
    """One per process: ``GreetingService`` is shared, ``NameFormatter`` is per request."""
    container = Container()
    container.singleton(GreetingService)
    container.scoped(NameFormatter)
    return container
