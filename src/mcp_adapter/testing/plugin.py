"""The pytest plugin of ``mcp-adapter``, loaded automatically where the package is installed.

Fixtures:

- ``mcp_container``: a fresh ``Container`` per test, closed afterwards (its
  singleton finalizers run). Override it in your ``conftest.py`` to test with
  your application's bindings.
- ``mcp_client``: a factory, ``mcp_client(servable, protocol=..., **options)``,
  returning an ``McpTestClient`` on ``mcp_container`` (or on ``container=``);
  clients it made with ``overrides=`` are closed at teardown.
- ``mcp_override``: ``mcp_override(Type, fake)`` replaces a binding of
  ``mcp_container`` (or of ``container=``) for the rest of the test, through
  ``container.override``; every override is undone at teardown, last first.

Marker:

- ``@pytest.mark.mcp_protocols``: run the test once per protocol era, with the
  era in the ``mcp_protocol`` fixture; ``mcp_client`` then speaks that era
  unless told otherwise.

Imports of the package happen inside the fixtures, so the plugin costs nothing
in test runs that do not use it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from container import Binding, Container, Lifetime
    from mcp_adapter.testing.client import McpTestClient

PROTOCOLS = ("2026-07-28", "2025-11-25")
_MISSING: Any = object()
MARKER = "mcp_protocols"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}: run the test once per MCP protocol era "
        "(2026-07-28, 2025-11-25); the era is the mcp_protocol fixture",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.definition.get_closest_marker(MARKER) is None:
        return
    if "mcp_protocol" in metafunc.fixturenames:
        metafunc.parametrize("mcp_protocol", PROTOCOLS, indirect=True)


@pytest.fixture
def mcp_protocol(request: pytest.FixtureRequest) -> str:
    """The protocol era of this test: ``2026-07-28`` unless ``mcp_protocols`` parametrizes it."""
    return str(getattr(request, "param", PROTOCOLS[0]))


@pytest.fixture
def mcp_container() -> Iterator[Container]:
    """A fresh container for one test; closed (singleton finalizers run) at teardown."""
    from container import Container

    container = Container()
    try:
        yield container
    finally:
        _close(container)


def _close(container: Container) -> None:
    _run(container.aclose)


@pytest.fixture
def mcp_client(
    mcp_container: Container, mcp_protocol: str
) -> Iterator[Callable[..., McpTestClient]]:
    """``mcp_client(server, *, protocol=None, container=None, **options) -> McpTestClient``.

    ``server`` is anything servable: a ``Server`` class, a compiled ``Catalog``,
    a ``Platform`` or any object with ``compile(container) -> Catalog``. The
    container defaults to ``mcp_container`` and the era to ``mcp_protocol``;
    ``options`` are ``McpTestClient``'s (``token=``, ``identity=``,
    ``overrides=``, ``capabilities=``, ``on_server_request=``).
    """
    from mcp_adapter.testing.client import McpTestClient

    made: list[McpTestClient] = []

    def make(
        server: Any,
        *,
        protocol: str | None = None,
        container: Container | None = None,
        **options: Any,
    ) -> McpTestClient:
        client = McpTestClient(
            container if container is not None else mcp_container,
            server,
            protocol=protocol or mcp_protocol,  # type: ignore[arg-type]
            **options,
        )
        made.append(client)
        return client

    yield make
    for client in reversed(made):
        _run(client.aclose)


class McpOverride:
    """The ``mcp_override`` fixture: ``mcp_override(Type, fake)`` for the rest of the test."""

    def __init__(self, container: Container, stack: contextlib.ExitStack) -> None:
        self._container = container
        self._stack = stack

    def __call__(
        self,
        key: Any,
        replacement: Any = _MISSING,
        *,
        factory: Callable[..., Any] | None = None,
        lifetime: Lifetime | None = None,
        container: Container | None = None,
    ) -> Binding:
        """Enter ``container.override(key, replacement, factory=..., lifetime=...)``.

        ``replacement`` is a value, or a class bound as an implementation
        (keeping the lifetime); ``factory=`` binds a factory instead. The
        container defaults to ``mcp_container``. Returns the binding in force.
        """
        target = container if container is not None else self._container
        if (replacement is _MISSING) == (factory is None):
            raise TypeError("mcp_override(key, replacement) or mcp_override(key, factory=...)")
        if factory is not None:
            override = target.override(key, factory=factory, lifetime=lifetime)
        else:
            override = target.override(key, replacement, lifetime=lifetime)
        binding: Binding = self._stack.enter_context(override)
        return binding


@pytest.fixture
def mcp_override(mcp_container: Container) -> Iterator[McpOverride]:
    """``mcp_override(Type, fake, *, factory=None, lifetime=None, container=None) -> Binding``.

    Replaces the binding of ``Type`` in ``mcp_container`` (or ``container=``)
    until the test ends, like ``monkeypatch`` does for attributes; teardown
    restores every binding, last override first, before ``mcp_container`` closes.
    """
    with contextlib.ExitStack() as stack:
        yield McpOverride(mcp_container, stack)


def _run(close: Callable[[], Any]) -> None:
    import anyio

    anyio.run(close)
