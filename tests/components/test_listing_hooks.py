"""A listing runs the sync hooks of its page together, in one worker-thread call.

Through the SDK's own client. ``anyio.to_thread.run_sync`` is wrapped (not
replaced) to count the thread hops a listing makes; everything else is real.
Components whose hooks are all sync, built and injected with sync code only,
go in the page's one call, in page order; the others (an async hook, an async
service) then run as they always did, in page order, on the loop.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.to_thread
import mcp
import pytest
from mcp import types

from container import Container
from mcp_adapter import McpRequest, McpResponse, Server, Tool, build_sdk_server, compile_server
from tests.components.support import SDK_MODES, sdk_client

pytestmark = pytest.mark.anyio

PAGE = 100
WAIT_LIMIT = 20.0
"""The longest a hook waits for the test (a broken build fails instead of hanging)."""


class Hops:
    """Counts ``anyio.to_thread.run_sync`` calls; the real function still runs them."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = anyio.to_thread.run_sync

        async def counted(func: Any, *args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return await real(func, *args, **kwargs)

        monkeypatch.setattr(anyio.to_thread, "run_sync", counted)


class HookLog:
    """What every hook saw: ``(hook, tool, thread)``, in the order they ran."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, int]] = []
        self.lock = threading.Lock()

    def add(self, hook: str, tool: str) -> None:
        with self.lock:
            self.events.append((hook, tool, threading.get_ident()))

    def tools(self) -> list[str]:
        return [tool for _, tool, _ in self.events]

    def threads(self) -> set[int]:
        return {thread for _, _, thread in self.events}

    def clear(self) -> None:
        self.events.clear()


class Scoped:
    """A scoped service with a finalizer, shared by the hooks of one listing."""

    def __init__(self, log: HookLog) -> None:
        self.log = log


def scoped_container(log: HookLog, closed: list[int]) -> Container:
    def open_scoped() -> Iterator[Scoped]:
        scoped = Scoped(log)
        yield scoped
        closed.append(id(scoped))

    container = Container()
    container.instance(HookLog, log)
    container.scoped(Scoped, open_scoped)
    return container


def hidden(i: int) -> bool:
    return i % 7 == 3


def forbidden(i: int) -> bool:
    return i % 5 == 4


def refused(i: int) -> bool:
    """Only the even tools have an ``authorize``."""
    return i % 2 == 0 and forbidden(i)


def sync_tool(i: int) -> type[Tool]:
    """``tool-<i>``: a sync shouldRegister, and a sync authorize on every other tool."""
    name = f"tool-{i:03d}"

    def should_register(self: Any, request: McpRequest, scoped: Scoped) -> bool:
        assert request.method in ("tools/list", "tools/call")
        scoped.log.add("shouldRegister", name)
        return not hidden(i)

    def authorize(self: Any, log: HookLog) -> bool:
        log.add("authorize", name)
        return not forbidden(i)

    async def handle(self: Any) -> McpResponse:
        return McpResponse.text(name)

    namespace: dict[str, Any] = {"name": name, "shouldRegister": should_register, "handle": handle}
    if i % 2 == 0:
        namespace["authorize"] = authorize
    return type(f"SyncHookTool{i}", (Tool,), namespace)


def sync_server(count: int) -> type[Server]:
    return type("SyncHooks", (Server,), {"tools": tuple(sync_tool(i) for i in range(count))})


def expected_hooks(indices: range) -> list[str]:
    """The tools whose hooks run, once per hook, in order: authorize only when registered."""
    ran: list[str] = []
    for i in indices:
        ran.append(f"tool-{i:03d}")
        if i % 2 == 0 and not hidden(i):
            ran.append(f"tool-{i:03d}")
    return ran


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_a_page_runs_its_sync_hooks_in_one_worker_thread_call(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    log, closed = HookLog(), list[int]()
    count = 250
    loop_thread = threading.get_ident()
    async with sdk_client(sync_server(count), scoped_container(log, closed), mode) as sdk:
        hops = Hops(monkeypatch)
        cursor: str | None = None
        for start in range(0, count, PAGE):
            log.clear()
            before = hops.count
            page = await sdk.list_tools(cursor=cursor)
            cursor = page.next_cursor
            indices = range(start, min(start + PAGE, count))
            assert hops.count - before == 1, "one worker-thread call for the whole page"
            assert log.tools() == expected_hooks(indices), "every hook ran once, in page order"
            (thread,) = log.threads()
            assert thread != loop_thread, "sync hooks stay off the event loop"
            shown = [f"tool-{i:03d}" for i in indices if not hidden(i) and not refused(i)]
            assert [tool.name for tool in page.tools] == shown
        assert cursor is None
        assert len(closed) == 3, "one scope per listing, closed"
        assert (await sdk.call_tool("tool-000", {})).content[0].text == "tool-000"  # type: ignore[union-attr]


# -- a page that mixes sync and async hooks ---------------------------------------------------


class Quota:
    """A service with an async factory: a sync hook needing it runs as before."""


async def make_quota() -> Quota:
    return Quota()


class SyncShown(Tool):
    name = "sync-shown"

    def shouldRegister(self, log: HookLog) -> bool:
        log.add("shouldRegister", self.name)
        return True


class AsyncShown(Tool):
    name = "async-shown"

    async def authorize(self, log: HookLog) -> bool:
        log.add("authorize", self.name)
        return True


class SyncHidden(Tool):
    name = "sync-hidden"

    def shouldRegister(self, log: HookLog) -> bool:
        log.add("shouldRegister", self.name)
        return False

    def authorize(self, log: HookLog) -> bool:
        log.add("authorize", self.name)  # never asked: not registered
        return True


class Mixed(Tool):
    """A sync shouldRegister and an async authorize: not in the page's batch."""

    name = "mixed"

    def shouldRegister(self, log: HookLog) -> bool:
        log.add("shouldRegister", self.name)
        return True

    async def authorize(self, log: HookLog) -> bool:
        log.add("authorize", self.name)
        return True


class AsyncService(Tool):
    """A sync hook whose service is built asynchronously: not in the page's batch."""

    name = "async-service"

    def shouldRegister(self, log: HookLog, quota: Quota) -> bool:
        log.add("shouldRegister", self.name)
        return isinstance(quota, Quota)


class NoHook(Tool):
    name = "no-hook"


class SyncForbidden(Tool):
    name = "sync-forbidden"

    def authorize(self, log: HookLog) -> bool:
        log.add("authorize", self.name)
        return False


class AsyncHidden(Tool):
    name = "async-hidden"

    async def shouldRegister(self, log: HookLog) -> bool:
        log.add("shouldRegister", self.name)
        return False


class SyncLast(Tool):
    name = "sync-last"

    def authorize(self, log: HookLog) -> bool:
        log.add("authorize", self.name)
        return True


async def _handle(self: Any) -> McpResponse:
    return McpResponse.text("x")


MIXED_TOOLS = tuple(
    type(cls.__name__, (cls,), {"handle": _handle})
    for cls in (
        SyncShown,
        AsyncShown,
        SyncHidden,
        Mixed,
        AsyncService,
        NoHook,
        SyncForbidden,
        AsyncHidden,
        SyncLast,
    )
)


class MixedServer(Server):
    tools = MIXED_TOOLS


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_a_mixed_page_keeps_its_order_and_batches_only_the_sync_hooks(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = HookLog()
    container = Container()
    container.instance(HookLog, log)
    container.scoped(Quota, make_quota)
    loop_thread = threading.get_ident()
    async with sdk_client(MixedServer, container, mode) as sdk:
        hops = Hops(monkeypatch)
        listed = await sdk.list_tools()
    assert [tool.name for tool in listed.tools] == [
        "sync-shown",
        "async-shown",
        "mixed",
        "async-service",
        "no-hook",
        "sync-last",
    ]
    ran = [(hook, tool) for hook, tool, _ in log.events]
    assert ran == [
        # the page's batch, in page order, in one worker-thread call
        ("shouldRegister", "sync-shown"),
        ("shouldRegister", "sync-hidden"),
        ("authorize", "sync-forbidden"),
        ("authorize", "sync-last"),
        # then the rest, in page order, as before
        ("authorize", "async-shown"),
        ("shouldRegister", "mixed"),
        ("authorize", "mixed"),
        ("shouldRegister", "async-service"),
        ("shouldRegister", "async-hidden"),
    ]
    threads = [thread for _, _, thread in log.events]
    batch = set(threads[:4])
    assert len(batch) == 1
    assert loop_thread not in batch
    assert threads[4] == loop_thread  # async-shown's async authorize
    assert threads[5] != loop_thread  # mixed: its sync shouldRegister, a hop of its own
    assert threads[6] == loop_thread  # mixed: its async authorize
    assert threads[7] != loop_thread  # async-service: a hop of its own
    assert threads[8] == loop_thread
    assert hops.count == 3, "the batch, mixed's sync hook and async-service's hook"


# -- a hook that raises in the batch ------------------------------------------------------------


def raising_tool(i: int, fails: bool) -> type[Tool]:
    name = f"tool-{i}"

    def should_register(self: Any, scoped: Scoped) -> bool:
        scoped.log.add("shouldRegister", name)
        if fails:
            raise RuntimeError("the policy store is down")
        return True

    async def handle(self: Any) -> McpResponse:
        return McpResponse.text(name)

    return type(
        f"Raising{i}",
        (Tool,),
        {"name": name, "shouldRegister": should_register, "handle": handle},
    )


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_a_hook_raising_in_the_batch_fails_the_listing_as_before(
    mode: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="mcp_adapter")
    log, closed = HookLog(), list[int]()
    tools = tuple(raising_tool(i, fails=i == 2) for i in range(5))
    server = type("Raising", (Server,), {"tools": tools})
    async with sdk_client(server, scoped_container(log, closed), mode) as sdk:
        hops = Hops(monkeypatch)
        with pytest.raises(mcp.MCPError) as raised:
            await sdk.list_tools()
        assert raised.value.error.code == types.INTERNAL_ERROR
        message = raised.value.error.message
        assert message.startswith("Listing failed (incident "), message
        assert "policy store" not in message
        assert log.tools() == ["tool-0", "tool-1", "tool-2"], "the batch ends at the raise"
        assert hops.count == 1
        assert len(closed) == 1, "the listing's scope closed"
        incident = message.removeprefix("Listing failed (incident ").removesuffix(")")
        (record,) = [r for r in caplog.records if incident in r.getMessage()]
        assert record.exc_info is not None
        assert "the policy store is down" in str(record.exc_info[1])
        # the next listing is served the same way, by the same rules
        log.clear()
        with pytest.raises(mcp.MCPError):
            await sdk.list_tools()
        assert log.tools() == ["tool-0", "tool-1", "tool-2"]


# -- a cancelled listing stops between hooks ------------------------------------------------


class Cancellable:
    """While ``hold``, the first hook waits until the server has applied the cancellation."""

    hold = False
    entered = threading.Event()
    applied = threading.Event()
    """Set by a server middleware, which sees ``notifications/cancelled`` once applied."""


async def observe_cancellation(ctx: Any, call_next: Any) -> Any:
    result = await call_next(ctx)
    if ctx.method == "notifications/cancelled":
        Cancellable.applied.set()
    return result


def waiting_tool(i: int) -> type[Tool]:
    name = f"tool-{i}"

    def should_register(self: Any, scoped: Scoped) -> bool:
        scoped.log.add("shouldRegister", name)
        if i == 0 and Cancellable.hold:
            Cancellable.entered.set()
            assert Cancellable.applied.wait(WAIT_LIMIT), "the cancellation never arrived"
        return True

    async def handle(self: Any) -> McpResponse:
        return McpResponse.text(name)

    return type(
        f"Waiting{i}", (Tool,), {"name": name, "shouldRegister": should_register, "handle": handle}
    )


async def test_a_cancelled_listing_stops_between_the_hooks_of_its_batch() -> None:
    """2025-11-25: ``notifications/cancelled`` arrives while the batch's first hook runs."""
    log, closed = HookLog(), list[int]()
    Cancellable.hold = True
    Cancellable.entered.clear()
    Cancellable.applied.clear()
    server = type("Waiting", (Server,), {"tools": tuple(waiting_tool(i) for i in range(5))})
    container = scoped_container(log, closed)
    sdk_server = build_sdk_server(compile_server(server, container), container)
    sdk_server.middleware.append(observe_cancellation)
    async with mcp.Client(sdk_server, mode="legacy", cache=None) as sdk:
        async with anyio.create_task_group() as tg:

            async def listing() -> None:
                with pytest.raises(Exception):  # noqa: B017 - the SDK reports the cancel its way
                    await sdk.list_tools()

            tg.start_soon(listing)
            with anyio.fail_after(WAIT_LIMIT):
                while not Cancellable.entered.is_set():
                    await anyio.sleep(0.005)
            tg.cancel_scope.cancel()  # the SDK client sends notifications/cancelled
        with anyio.fail_after(WAIT_LIMIT):
            while not closed:
                await anyio.sleep(0.005)
        assert Cancellable.applied.is_set()
        assert log.tools() == ["tool-0"], "no hook ran after the cancellation"
        assert len(closed) == 1, "the listing's scope closed"
        Cancellable.hold = False
        log.clear()
        listed = await sdk.list_tools()
        assert [tool.name for tool in listed.tools] == [f"tool-{i}" for i in range(5)]
