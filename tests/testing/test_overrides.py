"""``McpTestClient(overrides=...)`` and the ``mcp_override`` fixture.

``overrides=`` serves a container derived with ``container.with_overrides``: the
caller's container keeps its bindings. ``mcp_override`` enters
``container.override`` for the rest of a test and leaves it at teardown.
"""

from __future__ import annotations

import dataclasses
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from container import Container
from mcp_adapter import McpResponse, Server, Tool, compile_server
from mcp_adapter.extensions import McpExtension, Platform, tool
from mcp_adapter.testing import McpOverride, McpTestClient
from tests.user_suites import run_pytest

pytestmark = pytest.mark.anyio


class Clock:
    def now(self) -> str:
        return "real time"


class FrozenClock(Clock):
    def now(self) -> str:
        return "frozen time"


class Pool:
    """A singleton with a finalizer, to see which container closes what."""

    def __init__(self) -> None:
        self.closed = False


def open_pool() -> Iterator[Pool]:
    pool = Pool()
    yield pool
    pool.closed = True


class NowTool(Tool):
    name = "now"

    async def handle(self, clock: Clock, pool: Pool) -> McpResponse:
        return McpResponse.text(clock.now())


class ClockServer(Server):
    name = "clock"
    tools = (NowTool,)


class Clocks(McpExtension):
    name = "clocks"

    @tool
    async def when(self, clock: Clock) -> str:
        return clock.now()


def resolved(container: Container, key: type) -> Any:
    with container.scope() as scope:
        return scope.get(key)


def clock_container() -> Container:
    container = Container()
    container.scoped(Clock, Clock)
    container.singleton(Pool, open_pool)
    return container


# -- McpTestClient(overrides=...) -------------------------------------------------------


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize("fake", [FrozenClock(), FrozenClock], ids=["instance", "class"])
async def test_overrides_serve_a_derived_container(era: Any, fake: Any) -> None:
    container = clock_container()
    client = McpTestClient(container, ClockServer, protocol=era, overrides={Clock: fake})
    (await client.tool("now")).assertOk().assertTextContains("frozen time")
    assert client.container is not container
    # the caller's container is untouched
    assert type(resolved(container, Clock)) is Clock
    (await McpTestClient(container, ClockServer).tool("now")).assertTextContains("real time")


async def test_overrides_work_for_a_platform() -> None:
    client = McpTestClient(Container(), Platform([Clocks()]), overrides={Clock: FrozenClock()})
    (await client.tool("when")).assertOk().assertTextContains("frozen time")


async def test_the_derived_container_is_closed_by_the_client_not_the_callers() -> None:
    container = clock_container()
    mine = container.get(Pool)
    async with McpTestClient(container, ClockServer, overrides={Clock: FrozenClock()}) as client:
        (await client.tool("now")).assertOk()
        theirs = client.container.get(Pool)
    assert theirs is not mine
    assert theirs.closed
    assert not mine.closed
    plain = McpTestClient(container, ClockServer)
    await plain.aclose()  # nothing derived: the caller's container stays open
    assert not mine.closed
    await container.aclose()
    assert mine.closed


async def test_overrides_recompile_a_compiled_catalog_against_the_derived_container() -> None:
    container = clock_container()
    catalog = compile_server(ClockServer, container)
    client = McpTestClient(container, catalog, overrides={Clock: FrozenClock()})
    (await client.tool("now")).assertOk().assertTextContains("frozen time")
    handmade = dataclasses.replace(catalog, rebuild=None)
    with pytest.raises(TypeError, match="cannot apply to this Catalog"):
        McpTestClient(container, handmade, overrides={Clock: FrozenClock()})


async def test_the_fixture_passes_overrides_through(mcp_client: Any) -> None:
    client = mcp_client(ClockServer, container=clock_container(), overrides={Clock: FrozenClock()})
    (await client.tool("now")).assertOk().assertTextContains("frozen time")


# -- mcp_override -----------------------------------------------------------------------


@pytest.fixture
def mcp_container(mcp_container: Container) -> Container:
    mcp_container.scoped(Clock, Clock)
    mcp_container.singleton(Pool, open_pool)
    return mcp_container


@pytest.mark.mcp_protocols
async def test_mcp_override_reaches_a_server_compiled_after_it(
    mcp_override: McpOverride, mcp_client: Any, mcp_container: Container
) -> None:
    binding = mcp_override(Clock, FrozenClock())
    assert binding.key is Clock
    assert isinstance(resolved(mcp_container, Clock), FrozenClock)
    (await mcp_client(ClockServer).tool("now")).assertOk().assertTextContains("frozen time")


async def test_mcp_override_takes_a_class_or_a_factory(
    mcp_override: Any, mcp_container: Container
) -> None:
    mcp_override(Clock, FrozenClock)
    assert type(resolved(mcp_container, Clock)) is FrozenClock
    mcp_override(Clock, factory=lambda: FrozenClock())
    assert type(resolved(mcp_container, Clock)) is FrozenClock


async def test_mcp_override_on_another_container(mcp_override: Any) -> None:
    other = clock_container()
    mcp_override(Clock, FrozenClock(), container=other)
    (await McpTestClient(other, ClockServer).tool("now")).assertTextContains("frozen time")


def test_mcp_override_needs_exactly_one_replacement(mcp_override: Any) -> None:
    with pytest.raises(TypeError, match="mcp_override"):
        mcp_override(Clock)
    with pytest.raises(TypeError, match="mcp_override"):
        mcp_override(Clock, FrozenClock(), factory=FrozenClock)


async def test_mcp_override_reaches_a_client_built_before_it(
    mcp_override: Any, mcp_client: Any
) -> None:
    client = mcp_client(ClockServer)
    mcp_override(Clock, FrozenClock())
    (await client.tool("now")).assertOk().assertTextContains("frozen time")


def test_mcp_override_is_undone_at_teardown(tmp_path: Path) -> None:
    """In a separate pytest run: the next test sees the real binding, last override first."""
    (tmp_path / "test_override_use.py").write_text(
        textwrap.dedent(
            """
            import pytest

            class Clock:
                pass

            class Frozen(Clock):
                pass

            class Stopped(Clock):
                pass

            REAL = Clock()

            @pytest.fixture
            def mcp_container(mcp_container):
                mcp_container.instance(Clock, REAL)
                return mcp_container

            def test_overridden(mcp_override, mcp_container):
                mcp_override(Clock, Frozen())
                mcp_override(Clock, Stopped())
                assert isinstance(mcp_container.get(Clock), Stopped)

            SHARED = []

            def test_on_a_shared_container(mcp_override):
                from container import Container
                shared = Container()
                shared.instance(Clock, REAL)
                SHARED.append(shared)
                mcp_override(Clock, Frozen(), container=shared)
                mcp_override(Clock, Stopped(), container=shared)
                assert isinstance(shared.get(Clock), Stopped)

            def test_restored():
                assert SHARED[0].get(Clock) is REAL
            """
        )
    )
    run = run_pytest(tmp_path, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 passed" in run.stdout
