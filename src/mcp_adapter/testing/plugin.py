"""The pytest plugin of ``mcp-adapter``, loaded automatically where the package is installed.

Fixtures:

- ``mcp_container``: a fresh ``Container`` per test, closed afterwards (its
  singleton finalizers run). Override it in your ``conftest.py`` to test with
  your application's bindings.
- ``mcp_client``: a factory, ``mcp_client(ServerClass, protocol=...)``, returning
  an ``McpTestClient`` on ``mcp_container`` (or on ``container=``).

Marker:

- ``@pytest.mark.mcp_protocols``: run the test once per protocol era, with the
  era in the ``mcp_protocol`` fixture; ``mcp_client`` then speaks that era
  unless told otherwise.

Imports of the package happen inside the fixtures, so the plugin costs nothing
in test runs that do not use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from container import Container
    from mcp_adapter.testing.client import McpTestClient

PROTOCOLS = ("2026-07-28", "2025-11-25")
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
    import anyio

    anyio.run(container.aclose)


@pytest.fixture
def mcp_client(mcp_container: Container, mcp_protocol: str) -> Callable[..., McpTestClient]:
    """``mcp_client(server, *, protocol=None, container=None, **options) -> McpTestClient``.

    ``server`` is a ``Server`` class or a compiled ``Catalog``; the container
    defaults to ``mcp_container`` and the era to ``mcp_protocol``.
    """
    from mcp_adapter.testing.client import McpTestClient

    def make(
        server: Any,
        *,
        protocol: str | None = None,
        container: Container | None = None,
        **options: Any,
    ) -> McpTestClient:
        return McpTestClient(
            container if container is not None else mcp_container,
            server,
            protocol=protocol or mcp_protocol,  # type: ignore[arg-type]
            **options,
        )

    return make
