"""Serving one group's server on its transport and connecting the SDK's ``mcp.Client`` to it.

``memory``: the SDK server in process (``mcp.Client(server)``: 2026-07-28 direct dispatch, or
the 2025-11-25 handshake over memory streams); ``stdio``: ``mcp-adapter serve`` in a
subprocess; ``http_stateless``/``http_stateful``: the HTTP app under uvicorn on 127.0.0.1.
The client declares the tasks extension and answers every form (``Asked``).

``Hosts`` keeps one group's server and client open at a time, on an event loop of its own
(an anyio portal in a thread), so that the plain test functions of a group's cases share
them: each server starts once.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from concurrent.futures import Future
from contextlib import ExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import anyio
from anyio.from_thread import BlockingPortal
from mcp import Client, StdioServerParameters, types
from mcp.client.extension import advertise

from mcp_adapter import build_sdk_server, http_app
from mcp_adapter.tasks.wire import EXTENSION
from tests.composition.cases import LEGACY, Case
from tests.composition.servers import (
    WORD,
    cases_json,
    container_for,
    platform_for,
    server_name,
)
from tests.serving.harness import CLI, REPO, START_TIMEOUT, STOP_TIMEOUT, cli_env, serve_app

T = TypeVar("T")


@dataclass
class Asked:
    """The client's elicitation callback: accepts every form with ``WORD``, noting each
    question's message."""

    questions: list[str] = field(default_factory=list)

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.questions.append(params.message)
        return types.ElicitResult(action="accept", content={"word": WORD})


@dataclass
class Connected:
    client: Client
    asked: Asked


def _mode(era: str, transport: str) -> str:
    if era == LEGACY:
        return "legacy"
    return "2026-07-28" if transport == "memory" else "auto"


@asynccontextmanager
async def connected(cases: Sequence[Case], redis_url: str | None) -> AsyncIterator[Connected]:
    """The server of ``cases`` (one group) on its transport, and a client connected to it."""
    transport, era, store, _ = cases[0].group
    name = server_name(cases[0].group)
    url = redis_url if store == "redis" else None
    asked = Asked()
    options: dict[str, Any] = {
        "mode": _mode(era, transport),
        "elicitation_callback": asked,
        "extensions": [advertise(EXTENSION)],
    }
    async with _serving(cases, name, url, transport) as target, Client(target, **options) as client:
        yield Connected(client, asked)


@asynccontextmanager
async def _serving(
    cases: Sequence[Case], name: str, url: str | None, transport: str
) -> AsyncIterator[Any]:
    """What ``mcp.Client`` connects to: an SDK server, stdio parameters or a URL."""
    if transport == "stdio":
        env = {"COMPOSITION_CASES": cases_json(cases), "COMPOSITION_REDIS": url or ""}
        args = [*CLI[1:], "serve", "tests.composition.served:platform"]
        args += ["--container", "tests.composition.served:container"]
        args += ["--redis", url] if url else []
        yield StdioServerParameters(command=CLI[0], args=args, env=cli_env(env), cwd=REPO)
        return
    container = container_for(name, url)
    platform = platform_for(cases, name, url, cases[0].layers)
    if transport == "memory":
        yield build_sdk_server(platform.compile(container), container)
        return
    app = http_app(platform, container, stateless=transport == "http_stateless", redis=url)
    stack = ExitStack()
    base = await anyio.to_thread.run_sync(stack.enter_context, serve_app(app))
    try:
        yield f"{base}/mcp"
    finally:
        await anyio.to_thread.run_sync(stack.close)


class _Held:
    """One group's server and client, held open by a task of the portal until ``stop``."""

    def __init__(self) -> None:
        self.ready = threading.Event()
        self.connection: Connected | None = None
        self.stop: anyio.Event | None = None
        self.task: Future[None] | None = None

    async def hold(self, cases: Sequence[Case], url: str | None) -> None:
        self.stop = anyio.Event()
        try:
            async with connected(cases, url) as connection:
                self.connection = connection
                self.ready.set()
                await self.stop.wait()
        finally:
            self.ready.set()  # a server that did not start: ``task`` holds why


class Hosts:
    """The groups' servers and clients, on the portal's event loop: a group's server starts
    when its first case needs it (those of ``prestart`` all at once, at the first case: a
    ``stdio`` process takes seconds to start) and stops when the next group's case comes."""

    def __init__(
        self,
        portal: BlockingPortal,
        cases: Sequence[Case],
        redis: Callable[[], str],
        prestart: Sequence[Case] = (),
    ) -> None:
        self.portal = portal
        self.cases = cases
        self.redis = redis
        self.prestart = prestart
        self.held: dict[tuple[str, ...], _Held] = {}
        self.current: tuple[str, ...] | None = None

    def _start(self, group: tuple[str, ...]) -> _Held:
        if group not in self.held:
            members = [c for c in self.cases if c.group == group]
            url = self.redis() if members[0].store == "redis" else None
            held = self.held[group] = _Held()
            held.task = self.portal.start_task_soon(held.hold, members, url)
        return self.held[group]

    def connect(self, case: Case) -> Connected:
        if not self.held:
            for group in dict.fromkeys(c.group for c in self.prestart):
                self._start(group)
        if self.current is not None and self.current != case.group:
            self._stop(self.current)
        self.current = case.group
        held = self._start(case.group)
        if not held.ready.wait(START_TIMEOUT):
            raise TimeoutError(f"the server of {case.group} did not start in {START_TIMEOUT} s")
        if held.connection is None and held.task is not None:
            held.task.result(STOP_TIMEOUT)  # raises why it did not start
        if held.connection is None:
            raise RuntimeError(f"the server of {case.group} did not start")
        return held.connection

    def run(self, function: Callable[..., Coroutine[Any, Any, T]], *args: Any) -> T:
        return cast(T, self.portal.call(function, *args))

    def _stop(self, group: tuple[str, ...]) -> None:
        held = self.held[group]
        held.ready.wait(START_TIMEOUT)
        if held.connection is None:  # it did not start: its cases said why
            return
        if held.stop is not None:
            self.portal.call(held.stop.set)
        if held.task is not None:
            held.task.result(STOP_TIMEOUT)

    def close(self) -> None:
        for group in self.held:
            self._stop(group)
