"""Calling a tool as a client that supports every feature would, for
``assert_schema_separation``: it declares elicitation (form and URL), sampling (with
tools), roots, the tasks extension and MCP Apps; it answers every question the server
asks with a valid answer generated from the question (an elicitation form's content from
its ``requestedSchema``, a ``CreateMessageResult``, a list of roots), in both eras (the
2026-07-28 ``input_required`` retries, the 2025-11-25 requests over the connection, a
task's ``tasks/update``); it waits for a task's result; and it mints the state handles a
``StateHandle`` field takes.

The calls run on an event loop in a worker thread (a blocking portal); the answers are
drawn on the thread that calls :meth:`Driver.send`, the hypothesis test's, since a
hypothesis draw belongs to the test that makes it.
"""

from __future__ import annotations

import concurrent.futures
import queue
import warnings
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.auth.provider import AccessToken

from container import Container
from mcp_adapter.compiled.catalog import Catalog
from mcp_adapter.compiled.context import client_of
from mcp_adapter.compiled.handles import HandleDesk, StateHandles
from mcp_adapter.declare.apps import APP_MIME_TYPE, EXTENSION_ID
from mcp_adapter.declare.request import Identity
from mcp_adapter.distribution import needs_extra
from mcp_adapter.tasks.wire import EXTENSION as TASKS
from mcp_adapter.tasks.wire import TERMINAL
from mcp_adapter.testing.client import RESPONSE_TIMEOUT, McpTestClient, Protocol
from mcp_adapter.testing.result import McpResult
from mcp_adapter.testing.schema_strategies import UnsupportedSchemaError, from_json_schema

with needs_extra("testing", __name__):
    from hypothesis import strategies as st
    from hypothesis.errors import HypothesisDeprecationWarning

CAPABILITIES: dict[str, Any] = {
    "elicitation": {"form": {}, "url": {}},
    "sampling": {"tools": {}},
    "roots": {},
    "extensions": {TASKS: {}, EXTENSION_ID: {"mimeTypes": [APP_MIME_TYPE]}},
}
"""What the checking client declares, in both eras: every question a tool may ask can be
asked of it, every task tool runs as a task (2026-07-28), every app-only tool is there."""

MAX_ROUNDS = 16
"""Questions answered, and answered again, in one call before the check gives up (the
server's own limit on rounds is 8 by default)."""

POLL = 0.01
"""Seconds between two ``tasks/get`` while a task works."""

QUIET = 2 * RESPONSE_TIMEOUT
"""Seconds a call may go without asking anything or ending (each request of it is bounded
by ``RESPONSE_TIMEOUT``, a task's wait too): a bound that only a stuck call reaches."""

MODEL = "mcp-adapter-separation-check"
"""The ``model`` of every sampling answer."""

Draw = Callable[[st.SearchStrategy[Any]], Any]
"""Draws one value (``hypothesis``' ``data.draw``)."""


class CannotAnswer(AssertionError):
    """The server asked something the check cannot answer."""


def answers(method: str, params: Mapping[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Valid answers to the server's request ``method`` with ``params``.

    >>> answers("elicitation/create", {"mode": "url", "message": "Sign in"})
    just({'action': 'accept'})
    """
    if method == "elicitation/create":
        if params.get("mode") == "url":
            return st.just({"action": "accept"})
        try:
            content = from_json_schema(params.get("requestedSchema") or {"type": "object"})
        except UnsupportedSchemaError as exc:
            raise CannotAnswer(f"cannot generate an answer to the form asked: {exc}") from None
        return st.fixed_dictionaries({"action": st.just("accept"), "content": content})
    if method == "sampling/createMessage":
        text = st.text(st.characters(codec="utf-8"), max_size=40)
        return st.fixed_dictionaries(
            {
                "role": st.just("assistant"),
                "content": st.fixed_dictionaries({"type": st.just("text"), "text": text}),
                "model": st.just(MODEL),
            }
        )
    if method == "roots/list":
        root = st.from_regex(r"\A[a-z0-9]{1,8}\Z").map(lambda p: {"uri": f"file:///{p}"})
        return st.fixed_dictionaries({"roots": st.lists(root, max_size=3)})
    raise CannotAnswer(f"the server asked {method!r}, which the check cannot answer")


def fallback(method: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """A valid answer drawn from nothing, for the questions of an example hypothesis
    abandoned mid-call: the call ends as a client's would (a form cancelled), never cut
    off with its requests in flight.

    >>> fallback("roots/list", {})
    {'roots': []}
    """
    if method == "elicitation/create":
        return {"action": "accept" if params.get("mode") == "url" else "cancel"}
    if method == "sampling/createMessage":
        text = {"type": "text", "text": ""}
        return {"role": "assistant", "content": text, "model": MODEL}
    if method == "roots/list":
        return {"roots": []}
    raise CannotAnswer(f"the server asked {method!r}, which the check cannot answer")


class _Questions:
    """The questions of one call in flight: asked on the loop, answered on the drawing
    thread (every answer drawn there, in the order asked)."""

    def __init__(self) -> None:
        self.pending: queue.Queue[tuple[str, Any, concurrent.futures.Future[Any]] | None] = (
            queue.Queue()
        )
        self.abandoned = False
        """Hypothesis gave the example up: what the call still asks gets :func:`fallback`."""

    async def ask(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        if self.abandoned:
            return fallback(method, params)
        reply: concurrent.futures.Future[dict[str, Any]] = concurrent.futures.Future()
        self.pending.put((method, dict(params), reply))
        return await anyio.to_thread.run_sync(
            reply.result, RESPONSE_TIMEOUT, abandon_on_cancel=True
        )

    def answer_all(self, call: concurrent.futures.Future[Any], draw: Draw) -> None:
        """Draw an answer to each question until ``call`` is done. A draw that fails
        (hypothesis stopping the example) is raised once the call has ended on
        :func:`fallback` answers."""
        call.add_done_callback(lambda _: self.pending.put(None))
        while (asked := self._next(call)) is not None:
            method, params, reply = asked
            try:
                reply.set_result(draw(answers(method, params)))
            except BaseException:
                self.abandoned = True
                _settle(reply, method, params)
                while (left := self._next(call)) is not None:
                    _settle(left[2], left[0], left[1])
                raise

    def _next(
        self, call: concurrent.futures.Future[Any]
    ) -> tuple[str, Any, concurrent.futures.Future[Any]] | None:
        """The next question, or ``None`` once ``call`` is done."""
        try:
            return self.pending.get(timeout=QUIET)
        except queue.Empty:
            call.cancel()
            raise AssertionError(f"the call neither asked nor ended in {QUIET:g} s") from None


def _settle(reply: concurrent.futures.Future[Any], method: str, params: Any) -> None:
    try:
        reply.set_result(fallback(method, params))
    except CannotAnswer as exc:
        reply.set_exception(exc)


class Driver:
    """One protocol era's client (an ``McpTestClient`` declaring :data:`CAPABILITIES`),
    calling tools through every round a call takes, one call at a time."""

    def __init__(
        self,
        container: Container,
        catalog: Catalog,
        protocol: Protocol,
        portal: anyio.from_thread.BlockingPortal,
        *,
        identity: Identity | None = None,
        token: AccessToken | None = None,
    ) -> None:
        self.client = McpTestClient(
            container,
            catalog,
            protocol=protocol,
            capabilities=CAPABILITIES,
            on_server_request=self._over_the_connection,
            identity=identity,
            token=token,
        )
        self.portal = portal
        self._asked: _Questions | None = None
        self._handle: str | None = None

    def send(self, name: str, arguments: dict[str, Any], draw: Draw) -> McpResult:
        """``tools/call``, its questions answered with values ``draw`` gives, a task
        waited for: the call's final answer (a task's result as a ``tools/call`` result)."""
        self._asked = questions = _Questions()
        try:
            call = self.portal.start_task_soon(self._call, name, arguments, questions)
            questions.answer_all(call, draw)
            result: McpResult = call.result()
            return result
        finally:
            self._asked = None

    async def _over_the_connection(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """A 2025-11-25 server's request during the call, answered as the call's questions."""
        if self._asked is None:
            raise CannotAnswer(f"the server asked {method!r} outside a call")
        return await self._asked.ask(method, params)

    def handle(self) -> str:
        """A state handle of this client's caller, open until the client closes."""
        if self._handle is None:
            self._handle = self.portal.call(self._mint)
        return self._handle

    async def _mint(self) -> str:
        client = self.client
        owner = client_of(None, client.caller)  # as the dispatcher finds it in process
        call = object()  # the store settles the handles of a call: this one
        client.handles.begin(call)
        handle = StateHandles(HandleDesk.of(client.container, client.handles), owner, call).open()
        await client.handles.settle(call)
        return handle

    async def _call(self, name: str, arguments: dict[str, Any], asked: _Questions) -> McpResult:
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        result = await self.client.request("tools/call", params)
        rounds = 0
        while True:
            body = result.message.get("result")
            if not isinstance(body, dict):
                return result  # a protocol error
            if body.get("resultType") == "task":
                return await self._task(str(body["taskId"]), asked)
            if body.get("resultType") != "input_required":
                return result
            rounds += 1
            if rounds > MAX_ROUNDS:
                raise AssertionError(f"the call still asked for input after {MAX_ROUNDS} rounds")
            retry = {**params, "inputResponses": await _answered(body, asked)}
            if body.get("requestState") is not None:
                retry["requestState"] = body["requestState"]
            result = await self.client.request("tools/call", retry)

    async def _task(self, task_id: str, asked: _Questions) -> McpResult:
        rounds = 0
        with anyio.fail_after(RESPONSE_TIMEOUT):
            while True:
                got = await self.client.request("tasks/get", {"taskId": task_id})
                task = got.message.get("result")
                if not isinstance(task, dict):
                    return got  # a protocol error
                status = task.get("status")
                if status in TERMINAL:
                    return _outcome(got.message, task)
                if status == "input_required" and task.get("inputRequests"):
                    rounds += 1
                    if rounds > MAX_ROUNDS:
                        raise AssertionError(f"the task still asked after {MAX_ROUNDS} rounds")
                    answered = await _answered(task, asked)
                    update = {"taskId": task_id, "inputResponses": answered}
                    await self.client.request("tasks/update", update)
                await anyio.sleep(POLL)


async def _answered(body: Mapping[str, Any], asked: _Questions) -> dict[str, Any]:
    """An answer to each question under ``inputRequests``, by its key."""
    requests = body.get("inputRequests") or {}
    return {
        key: await asked.ask(str(request.get("method")), request.get("params") or {})
        for key, request in requests.items()
    }


def _outcome(message: Mapping[str, Any], task: Mapping[str, Any]) -> McpResult:
    """A task that ended, as the ``tools/call`` answer an inline call would have been."""
    answer: dict[str, Any] = {"jsonrpc": "2.0", "id": message.get("id")}
    if isinstance(task.get("result"), dict):
        answer["result"] = task["result"]
    else:
        ended = {"code": -1, "message": f"the task ended {task.get('status')}"}
        answer["error"] = task.get("error") or ended
    return McpResult(answer)


@asynccontextmanager
async def _shared_lifespan(client: McpTestClient) -> AsyncIterator[None]:
    """The server's lifespan entered once and shared by every connection of ``client``
    (as the HTTP transport's session manager shares it): its task engine's worker runs
    between the calls, so a task outlives the request that started it."""
    server = client.sdk_server
    own = server.lifespan
    async with own(server) as state:

        @asynccontextmanager
        async def shared(_: Any) -> AsyncIterator[Any]:
            yield state

        server.lifespan = shared
        try:
            yield
        finally:
            server.lifespan = own


@contextmanager
def driving(driver: Driver) -> Iterator[Driver]:
    """``driver``'s server serving while the block runs (one lifespan for all its calls);
    its client closed at the end (its state handles finalized)."""
    client = driver.client
    try:
        with (
            warnings.catch_warnings(),
            driver.portal.wrap_async_context_manager(_shared_lifespan(client)),
        ):
            # The task engine's worker (Docket) draws its sweeps' jitter from the global
            # ``random`` on the portal's thread while hypothesis draws here, and
            # hypothesis takes any change of that state for a strategy using it.
            warnings.filterwarnings(
                "ignore",
                message="Do not use the `random` module inside strategies",
                category=HypothesisDeprecationWarning,
            )
            yield driver
    finally:
        driver.portal.call(client.aclose)
