"""Tasks on Docket: starting one, reading it, cancelling it, and the worker that runs the
bodies (in the serving process, or in ``mcp-adapter worker`` processes).

Docket keeps everything about a task (its arguments, its state, its result, for
``execution_ttl``); this module adds only the MCP side: the owner each task is
visible to, its TTL, the caps on tasks not ended yet, and the wire shapes.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import anyio.abc
from mcp import types

from mcp_adapter.declare.tasks import Tasks
from mcp_adapter.distribution import needs_extra
from mcp_adapter.errors import logger
from mcp_adapter.tasks.places import Places
from mcp_adapter.tasks.reading import Asked, execution_of
from mcp_adapter.tasks.status import StatusSession
from mcp_adapter.tasks.waiting import RESUME, Waiting, asked
from mcp_adapter.tasks.wire import (
    TERMINAL,
    Ack,
    CreateTaskResult,
    DetailedTask,
    absent,
    store_failed,
)

FUNCTION = "mcp_adapter.tool_task"
"""The name the task body is registered under in Docket."""

Body = Callable[[str, Mapping[str, Any], StatusSession], Awaitable[dict[str, Any]]]
"""Runs a tool's body for a task: ``(tool name, the frozen request, its status) ->
outcome``, where the outcome is ``{"result": CallToolResult}`` or ``{"error": {code,
message}}``; the body's progress and log messages go to the status session."""

MESSAGE = "statusMessage"
"""The key of an outcome that keeps the body's last status message."""

WORKER_STOPPED = "The worker running this task stopped; the task was not run again"

SHUT_DOWN = "The server shut down before the task ended"

_STATUS = {
    "scheduled": "working",
    "queued": "working",
    "running": "working",
    "completed": "completed",
    "failed": "failed",
    "cancelled": "cancelled",
}


def _iso(moment: datetime | None) -> str:
    return (moment or datetime.now(UTC)).isoformat().replace("+00:00", "Z")


def new_task_id() -> str:
    """An unguessable id: 256 random bits."""
    return secrets.token_urlsafe(32)


class TaskEngine:
    """The tasks of one served catalog, on one Docket (``Tasks.url``)."""

    def __init__(self, settings: Tasks, name: str) -> None:
        self.settings = settings
        self.name = settings.name or f"mcp-adapter:{name}"
        self.url = settings.url
        if self.url == "memory://":  # one store per engine, never shared by accident
            self.url = f"memory://{secrets.token_hex(8)}"
        self.ttl_ms = int(settings.ttl * 1000)
        self.poll_ms = max(1, int(settings.poll_interval * 1000))
        self._body: Body | None = None
        self._docket: Any = None
        self._places = Places(settings.max_running, settings.max_running_per_identity)
        self._idle: anyio.Event | None = None
        self._bodies: dict[str, anyio.CancelScope] = {}
        self._asked = Asked()  # the rounds that asked, read once

    def bind(self, body: Body) -> None:
        """The dispatcher's task body (set once, when the server is built)."""
        self._body = body

    @property
    def docket(self) -> Any:
        if self._docket is None:
            raise RuntimeError("tasks are served only while their server serves (its lifespan)")
        return self._docket

    @contextmanager
    def bounded(self) -> Iterator[None]:
        """One request's waits on the task store, within ``Tasks.store_timeout`` in all.
        Docket's own connection has no read timeout (its worker blocks on reads by design),
        so a stalled Redis would hold the request as long as it stalls: past the bound,
        or when the store fails, the request answers ``-32603`` saying so instead."""
        timeout = self.settings.store_timeout
        try:
            with anyio.fail_after(timeout):
                yield
        except TimeoutError:
            raise store_failed(f"did not answer within {timeout:g} s") from None
        except Exception as exc:
            with needs_extra("redis", "the task store"):  # Docket depends on it
                from redis.exceptions import RedisError

            if isinstance(exc, RedisError | OSError):
                logger.warning("the task store failed: %r", exc)
                raise store_failed(f"failed ({type(exc).__name__})") from exc
            raise

    # -- serving -----------------------------------------------------------------

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """Docket, and its worker unless ``Tasks.worker`` is off (this process then only
        enqueues), for as long as the server serves; at the end, running bodies are
        drained (``on_shutdown="drain"``, within ``shutdown_grace``) or cancelled,
        their scopes closed. ``mcp-adapter worker`` runs exactly this, without serving."""
        with needs_extra("tasks", "serving task tools"):
            from docket import CurrentExecution, Docket, Execution, Worker

        async def tool_task(
            record: dict[str, Any],
            execution: Execution = CurrentExecution(),  # noqa: B008 - Docket's dependency
        ) -> dict[str, Any]:
            return await self._run(record, execution)

        settings = self.settings
        keep = timedelta(seconds=settings.max_ttl)
        async with Docket(name=self.name, url=self.url, execution_ttl=keep) as docket:
            docket.register(tool_task, names=[FUNCTION])
            if not settings.worker:
                self._docket = docket
                try:
                    yield
                finally:
                    self._docket = None
                return
            worker = Worker(
                docket,
                concurrency=settings.max_running,
                redelivery_timeout=timedelta(seconds=settings.redelivery_timeout),
                minimum_check_interval=timedelta(milliseconds=50),
                scheduling_resolution=timedelta(milliseconds=50),
                schedule_automatic_tasks=False,
            )
            stop, ended = anyio.Event(), anyio.Event()
            async with anyio.create_task_group() as group:
                await group.start(_work, worker, stop, ended)
                self._docket = docket
                try:
                    yield
                finally:
                    with anyio.CancelScope(shield=True):
                        stop.set()  # Docket's worker takes no more task
                        await self._stop(settings)
                        with anyio.move_on_after(settings.shutdown_grace):
                            await ended.wait()  # ... and has recorded the outcomes
                    self._docket = None
                    group.cancel_scope.cancel()  # a worker loop that did not end in time

    async def _stop(self, settings: Tasks) -> None:
        """Drain (within the grace) or cancel the bodies running here, and wait until
        each has ended and closed its scope."""
        if settings.on_shutdown == "drain" and self._bodies:
            self._idle = anyio.Event()
            with anyio.move_on_after(settings.shutdown_grace):
                await self._idle.wait()
        for body in list(self._bodies.values()):
            body.cancel()
        with anyio.move_on_after(settings.shutdown_grace):
            while self._bodies:
                await anyio.sleep(0.005)

    # -- the MCP side ----------------------------------------------------------------

    async def _prune(self) -> None:
        """Give back the places of tasks that no longer hold one: a task waiting for input
        keeps its place until it ends, and it may end where this process does not see it
        (expired, or resumed and ended in another process); asked when a cap is full."""
        for owner, key in self._places.held():
            if key not in self._bodies and not await self._holds(key):
                self._places.release(owner, key)

    async def _holds(self, key: str) -> bool:
        """Whether the task ``key`` has not ended (queued, running, or waiting for input)."""
        execution = await execution_of(self.docket, key)
        record = execution.kwargs.get("record") if execution is not None else None
        if not isinstance(record, Mapping):
            return False
        ttl_ms = record.get("ttl_ms")
        expiry = _created(execution, record) + timedelta(milliseconds=int(ttl_ms or 0))
        if isinstance(ttl_ms, int) and datetime.now(UTC) >= expiry:
            return False
        status = _STATUS[execution.state.value]
        if status != "completed":
            return status == "working"
        waiting = asked(await self._asked.outcome(execution))
        if waiting is None:
            return False
        return await Waiting(self.docket).fate(key, int(record.get("round", 0))) != "cancel"

    async def start(self, tool: str, request: Mapping[str, Any], owner: str) -> CreateTaskResult:
        """Enqueue the body; answer the task's handle once Docket holds it."""
        with self.bounded():
            return await self._start(tool, request, owner)

    async def _start(self, tool: str, request: Mapping[str, Any], owner: str) -> CreateTaskResult:
        docket = self.docket
        key = new_task_id()
        if self._places.full(owner):
            await self._prune()
        self._places.admit(owner, key)
        record = {
            "owner": owner,
            "tool": tool,
            "ttl_ms": self.ttl_ms,
            "request": dict(request),
            "created": _iso(None),
            "round": 0,
        }
        try:
            await docket.add(FUNCTION, key=key)(record=record)
        except BaseException:
            self._places.release(owner, key)
            raise
        created = str(record["created"])
        return CreateTaskResult(
            task_id=key,
            status="working",
            created_at=created,
            last_updated_at=created,
            ttl_ms=self.ttl_ms,
            poll_interval_ms=self.poll_ms,
        )

    async def _find(self, task_id: str, owner: str) -> tuple[Any, Mapping[str, Any]]:
        """The task's execution and record; anything else is exactly an absent task's
        answer (another owner's, expired, malformed)."""
        if not task_id or len(task_id) > 200:
            raise absent(task_id)
        execution = await execution_of(self.docket, task_id)
        record = execution.kwargs.get("record") if execution is not None else None
        if not isinstance(record, Mapping) or not hmac.compare_digest(
            str(record.get("owner", "")), owner
        ):
            raise absent(task_id)
        ttl_ms = record.get("ttl_ms")
        if isinstance(ttl_ms, int):
            expiry = _created(execution, record) + timedelta(milliseconds=ttl_ms)
            if datetime.now(UTC) >= expiry:
                if _STATUS[execution.state.value] not in TERMINAL:
                    await self.docket.cancel(task_id)
                raise absent(task_id)
        return execution, record

    async def get(self, task_id: str, owner: str) -> DetailedTask:
        """The task as ``tasks/get`` answers it."""
        with self.bounded():
            return await self._get(task_id, owner)

    async def _get(self, task_id: str, owner: str) -> DetailedTask:
        execution, record = await self._find(task_id, owner)
        status = _STATUS[execution.state.value]
        result: dict[str, Any] | None = None
        error: dict[str, Any] | None = None
        questions: dict[str, Any] | None = None
        message = execution.progress.message  # while it runs; then its outcome keeps it
        if status == "completed":
            outcome = await self._asked.outcome(execution)
            message = outcome.get(MESSAGE) if isinstance(outcome, Mapping) else None
            waiting = asked(outcome)
            if waiting is not None:  # the round asked: tasks/update answers it
                status, questions = await self._waiting(task_id, record, waiting)
            elif isinstance(outcome, Mapping) and isinstance(outcome.get("result"), Mapping):
                result = dict(outcome["result"])
            else:
                status = "failed"
                found = outcome.get("error") if isinstance(outcome, Mapping) else None
                error = dict(found) if isinstance(found, Mapping) else _internal()
        elif status == "failed":
            error = _internal()
        updated = execution.completed_at or execution.started_at or execution.when
        return DetailedTask(
            task_id=task_id,
            status=status,
            status_message=message if isinstance(message, str) else None,
            created_at=_iso(_created(execution, record)),
            last_updated_at=_iso(updated),
            ttl_ms=record.get("ttl_ms"),
            poll_interval_ms=self.poll_ms,
            result=result,
            error=error,
            input_requests=questions,
        )

    async def _waiting(
        self, task_id: str, record: Mapping[str, Any], waiting: Mapping[str, Any]
    ) -> tuple[str, dict[str, Any] | None]:
        """The status of a task whose last round asked, and its unanswered questions."""
        round_, store = int(record.get("round", 0)), Waiting(self.docket)
        fate, pending = await store.pending(task_id, round_, waiting["requests"])
        if fate == RESUME:  # resumed; its round enqueued again if that was lost
            answers = await store.answers(task_id, round_)
            await store.resume(task_id, record, waiting, answers, FUNCTION)
        if fate is not None:  # cancelled while waiting, or resumed (enqueued, not yet run)
            return ("cancelled" if fate == "cancel" else "working"), None
        return "input_required", pending

    async def update(self, task_id: str, owner: str, responses: Mapping[str, Any]) -> Ack:
        """Answers to a task waiting for input: kept for the questions of its round that
        have none yet (others ignored); the answer that completes the round resumes the
        task, once. A task that waits for nothing ignores them."""
        with self.bounded():
            return await self._update(task_id, owner, responses)

    async def _update(self, task_id: str, owner: str, responses: Mapping[str, Any]) -> Ack:
        execution, record = await self._find(task_id, owner)
        if _STATUS[execution.state.value] != "completed":
            return Ack()
        waiting = asked(await self._asked.outcome(execution))
        if waiting is None:
            return Ack()
        round_ = int(record.get("round", 0))
        seconds = self._seconds_left(execution, record)
        answers = await Waiting(self.docket).answer(
            task_id, round_, waiting["requests"], responses, seconds
        )
        if answers is not None:
            await Waiting(self.docket).resume(task_id, record, waiting, answers, FUNCTION)
        return Ack()

    def _seconds_left(self, execution: Any, record: Mapping[str, Any]) -> int:
        """Seconds until the task expires (what its waiting answers are kept for)."""
        ttl_ms = record.get("ttl_ms")
        if not isinstance(ttl_ms, int):
            return int(self.settings.max_ttl)
        expiry = _created(execution, record) + timedelta(milliseconds=ttl_ms)
        return max(1, int((expiry - datetime.now(UTC)).total_seconds()) + 1)

    async def cancel(self, task_id: str, owner: str) -> Ack:
        """Cancel the task if it has not ended (idempotent: an ended task stays as it is)."""
        with self.bounded():
            return await self._cancel(task_id, owner)

    async def withdraw(self, task_id: str) -> None:
        """Cancel a task whose handle never reached its caller (a request-stage layer
        answered something else, or the request was cancelled): nobody could read it."""
        with anyio.CancelScope(shield=True), self.bounded():
            execution = await execution_of(self.docket, task_id)
            record = execution.kwargs.get("record") if execution is not None else None
            if isinstance(record, Mapping):
                await self._cancel(task_id, str(record["owner"]))

    async def _cancel(self, task_id: str, owner: str) -> Ack:
        execution, record = await self._find(task_id, owner)
        if _STATUS[execution.state.value] == "completed":
            waiting = asked(await self._asked.outcome(execution))
            if waiting is not None:  # a task waiting for input ends cancelled, unless resumed
                seconds = self._seconds_left(execution, record)
                if await Waiting(self.docket).cancel(task_id, int(record.get("round", 0)), seconds):
                    self._places.release(str(record["owner"]), task_id)
                else:
                    await self.docket.cancel(task_id)  # resumed meanwhile: cancel that run
            return Ack()
        if _STATUS[execution.state.value] not in TERMINAL:
            await self.docket.cancel(task_id)
            if execution.state.value in ("scheduled", "queued"):
                self._places.release(str(record["owner"]), task_id)  # its body never runs
        return Ack()

    # -- the worker's side -------------------------------------------------------------

    async def _run(self, record: dict[str, Any], execution: Any) -> dict[str, Any]:
        """The Docket task: the tool's body, once; a redelivered task (its worker died
        mid-run) ends failed instead of running a second time."""
        owner = str(record["owner"])
        waits = False
        try:
            if execution.redelivered:
                logger.error("task %s: its worker stopped mid-run; ended failed", execution.key)
                return {"error": {"code": types.INTERNAL_ERROR, "message": WORKER_STOPPED}}
            if self._body is None:
                raise RuntimeError("no task body is bound")
            with anyio.CancelScope() as scope:
                self._bodies[execution.key] = scope
                async with anyio.create_task_group() as writes:
                    status = StatusSession(execution.progress, writes)
                    outcome = await self._body(str(record["tool"]), record["request"], status)
                    writes.cancel_scope.cancel()  # the outcome keeps the last message
                waits = asked(outcome) is not None
                if status.latest is not None:
                    outcome = {**outcome, MESSAGE: status.latest}
                return outcome
            return {"error": {"code": types.INTERNAL_ERROR, "message": SHUT_DOWN}}
        finally:
            self._bodies.pop(execution.key, None)
            if not waits:  # one waiting for input keeps its place (no-op: another's task)
                self._places.release(owner, execution.key)
            if not self._bodies and self._idle is not None:
                self._idle.set()  # draining: the last body here has ended


async def _work(
    worker: Any,
    stop: anyio.Event,
    ended: anyio.Event,
    *,
    task_status: anyio.abc.TaskStatus[None],
) -> None:
    """Docket's worker, entered, run and left in this one task (its context variables are
    reset where they were set), until ``stop``. Leaving it stops the loop gracefully: it
    takes no more task, waits for those it runs and records their outcomes."""
    try:
        async with anyio.create_task_group() as loop, worker:
            await loop.start(_forever, worker)
            task_status.started()
            await stop.wait()
    finally:
        ended.set()


async def _forever(worker: Any, *, task_status: anyio.abc.TaskStatus[None]) -> None:
    """Docket's worker loop, reported started once it runs (a stop asked before then would
    be forgotten: the loop clears its stop flag as it starts)."""
    task_status.started()
    await worker.run_forever()


def _created(execution: Any, record: Mapping[str, Any]) -> datetime:
    """When the task was created: kept in its record, since each round of a task that asked
    for input is a new run of its Docket key."""
    found = record.get("created")
    if isinstance(found, str):
        return datetime.fromisoformat(found.replace("Z", "+00:00"))
    return execution.when  # type: ignore[no-any-return]


def _internal() -> dict[str, Any]:
    return {"code": types.INTERNAL_ERROR, "message": "Task failed"}
