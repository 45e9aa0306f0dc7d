"""A task's execution read in one round trip is the execution ``get_execution`` reads.

``mcp_adapter.tasks.reading.execution_of`` builds Docket's ``Execution`` from one
pipelined read of the runs and progress hashes (``tasks/get`` reads every poll with
it); these hold it to ``Docket.get_execution`` in each state a task passes through,
on ``memory://`` and on a real Redis, and count the round trips (as does the read of
a round of questions, ``Waiting.pending``). It reads Docket's private parts through
``mcp_adapter.compat``: the installed Docket must have them, called as
that module calls them, and no other module of ``src/`` reads a private attribute of
Docket's objects.
"""

from __future__ import annotations

import ast
import inspect
import secrets
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from docket import Docket, Execution, Progress, Worker
from docket.execution import ExecutionProgress
from mcp import MCPError, types
from redis.asyncio.connection import AbstractConnection

import mcp_adapter.compat as compat
from mcp_adapter.tasks.reading import Asked, execution_of
from mcp_adapter.tasks.waiting import Waiting
from tests.serving.test_compat import private_reads

pytestmark = pytest.mark.anyio

FIELDS = (
    "key",
    "function",
    "args",
    "kwargs",
    "when",
    "attempt",
    "state",
    "worker",
    "started_at",
    "completed_at",
    "error",
    "result_key",
)


def seen(execution: Execution) -> dict[str, Any]:
    fields = {name: getattr(execution, name) for name in FIELDS}
    fields["function"] = getattr(fields["function"], "__name__", None)
    progress = execution.progress
    fields["progress"] = (progress.current, progress.total, progress.message)
    return fields


async def same(docket: Docket, key: str) -> Execution:
    mine, theirs = await execution_of(docket, key), await docket.get_execution(key)
    assert mine is not None
    assert theirs is not None
    assert seen(mine) == seen(theirs)
    return mine


released = anyio.Event()


async def body(record: dict[str, Any], progress: Progress = Progress()) -> dict[str, Any]:  # noqa: B008
    await progress.set_message(f"working on {record['n']}")
    await released.wait()
    return {"result": record["n"]}


@asynccontextmanager
async def a_docket(url: str) -> AsyncIterator[Docket]:
    async with Docket(name=f"reading-{secrets.token_hex(4)}", url=url) as docket:
        docket.register(body)
        yield docket


@pytest.fixture(params=["memory", "redis"])
def url(request: pytest.FixtureRequest) -> str:
    if request.param == "memory":
        return f"memory://{secrets.token_hex(4)}"
    found: str = request.getfixturevalue("redis_url")
    return found


async def test_every_state_reads_as_get_execution_reads_it(url: str) -> None:
    global released
    released = anyio.Event()
    async with a_docket(url) as docket:
        assert await execution_of(docket, "absent") is None
        later = datetime.now(UTC) + timedelta(hours=1)
        await docket.add(body, key="later", when=later)(record={"n": 1})
        assert (await same(docket, "later")).state.value == "scheduled"

        await docket.add(body, key="now")(record={"n": 2})
        assert (await same(docket, "now")).state.value in ("queued", "scheduled")

        fast = timedelta(milliseconds=5)
        async with (
            Worker(docket, minimum_check_interval=fast) as worker,
            anyio.create_task_group() as group,
        ):
            group.start_soon(worker.run_until_finished)
            with anyio.fail_after(10):  # until it runs and has reported (then it holds still)
                while (await docket.get_execution("now")).progress.message is None:  # type: ignore[union-attr]
                    await anyio.sleep(0.01)
            found = await same(docket, "now")
            assert found.state.value == "running"
            assert found.progress.message == "working on 2"
            await docket.cancel("later")
            released.set()
        done = await same(docket, "now")
        assert done.state.value == "completed"
        assert await done.get_result() == {"result": 2}


@contextmanager
def round_trips(monkeypatch: pytest.MonkeyPatch, marker: bytes) -> Iterator[list[int]]:
    """Counts what this process sends to Redis about ``marker`` (a key): one send per
    command, or per pipeline."""
    sent = [0]
    send = AbstractConnection.send_packed_command

    async def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        packed = args[0] if args else kwargs["command"]
        if marker in (packed if isinstance(packed, bytes) else b"".join(packed)):
            sent[0] += 1  # not Docket's own background reads (its strikes stream)
        return await send(self, *args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(AbstractConnection, "send_packed_command", counted)
        yield sent


async def test_a_read_is_one_round_trip(redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``get_execution`` reads the runs hash, then it again with the progress hash (two
    round trips); ``execution_of`` reads both once, in one pipeline."""
    async with a_docket(redis_url) as docket:
        await docket.add(body, key="counted")(record={"n": 3})
        with round_trips(monkeypatch, b"counted") as theirs:
            await docket.get_execution("counted")
        with round_trips(monkeypatch, b"counted") as mine:
            await execution_of(docket, "counted")
        assert (theirs, mine) == ([2], [1])


async def test_a_waiting_round_is_read_in_one_round_trip(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tasks/get`` of a task waiting for input reads the round's fate and its answers
    together: the questions still open, then none once the round has resumed."""
    async with a_docket(redis_url) as docket:
        waiting = Waiting(docket)
        asked = {"a": {"method": "roots/list"}, "b": {"method": "roots/list"}}
        assert await waiting.answers("t", 0) == {}  # a connection in the pool
        with round_trips(monkeypatch, b"mcp-input:t:0") as sent:
            assert await waiting.pending("t", 0, asked) == (None, asked)
        assert sent == [1]
        assert await waiting.answer("t", 0, asked, {"a": {"roots": []}}, 60) is None
        assert await waiting.pending("t", 0, asked) == (None, {"b": asked["b"]})
        with round_trips(monkeypatch, b"mcp-input:t:0") as sent:
            resumed = await waiting.answer("t", 0, asked, {"b": {"roots": []}}, 60)
        assert resumed == {"a": {"roots": []}, "b": {"roots": []}}
        assert sent == [1]  # the script that keeps it answers the round's answers
        assert await waiting.pending("t", 0, asked) == ("resume", {})


async def outcome_body(record: dict[str, Any]) -> dict[str, Any]:
    return dict(record["outcome"])


async def test_a_round_that_asked_is_read_from_the_result_store_once(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``tasks/get`` polls, the ``tasks/update`` and the ``tasks/cancel`` of a task
    waiting for input read its round's questions from Docket's result store once
    (``Asked``); a result or an error is read each time (never kept)."""
    question = {"input": {"requests": {"a": {"method": "roots/list"}}, "state": "s"}}
    async with Docket(name=f"reading-{secrets.token_hex(4)}", url=redis_url) as docket:
        docket.register(outcome_body)
        await docket.add(outcome_body, key="asks")(record={"outcome": question})
        await docket.add(outcome_body, key="ends")(record={"outcome": {"result": 1}})
        async with Worker(docket, minimum_check_interval=timedelta(milliseconds=5)) as worker:
            await worker.run_until_finished()
        kept = Asked()
        for key, outcome, reads in (("asks", question, [1]), ("ends", {"result": 1}, [3])):
            execution = await execution_of(docket, key)
            assert execution is not None
            with round_trips(monkeypatch, f"{key}:".encode()) as sent:
                for _ in range(3):
                    assert await kept.outcome(execution) == outcome
            assert sent == reads, key


async def test_an_ended_run_without_its_result_is_the_stores_failure_not_an_outcome(
    url: str,
) -> None:
    """A run whose state names a result the result store does not hold (read on another
    node for a moment after a failover: the chaos run saw tasks answer ``failed``, then
    ``completed``) makes the read fail (``-32603``, try again), never an outcome of
    ``None`` that ``tasks/get`` would answer as the task failed."""
    async with Docket(name=f"reading-{secrets.token_hex(4)}", url=url) as docket:
        docket.register(outcome_body)
        await docket.add(outcome_body, key="ends")(record={"outcome": {"result": 1}})
        async with Worker(docket, minimum_check_interval=timedelta(milliseconds=5)) as worker:
            await worker.run_until_finished()
        execution = await execution_of(docket, "ends")
        assert execution is not None
        assert execution.result_key is not None
        await docket.result_storage.delete(execution.result_key)
        with pytest.raises(MCPError) as raised:
            await Asked().outcome(execution)
        assert raised.value.error.code == types.INTERNAL_ERROR
        assert "try again" in raised.value.error.message


# -- Docket's private parts, as mcp_adapter.compat calls them -------------

DOCKET_READS = {
    "queue_progress_read": {"_read"},
    "apply_execution_reads": {"_apply_runs_data", "_apply"},
}
"""The private attributes of Docket's objects each function of the compat module reads."""
PIPE, DATA = object(), {b"state": b"queued"}


def private_names(function: Callable[..., Any]) -> set[str]:
    """The names of the private attributes ``function`` reads (of objects not its own)."""
    return {
        read.rpartition(" (line ")[0].rpartition(".")[2]
        for read in private_reads(inspect.getsource(function))
    }


def test_the_compat_module_reads_of_docket_only_what_is_checked_here() -> None:
    assert {name: private_names(getattr(compat, name)) for name in DOCKET_READS} == DOCKET_READS


@pytest.mark.parametrize(
    ("owner", "name", "call"),
    [
        (ExecutionProgress, "_read", (PIPE,)),  # queue_progress_read
        (Execution, "_apply_runs_data", (DATA,)),  # apply_execution_reads
        (ExecutionProgress, "_apply", (DATA,)),  # apply_execution_reads, on .progress
    ],
)
def test_the_installed_docket_has_what_the_compat_module_calls(
    owner: type, name: str, call: tuple[Any, ...]
) -> None:
    """Fails on a Docket below 0.25.0 (none of them) or one that moved or reshaped one:
    each is there, a plain method, and takes the arguments the compat module passes."""
    method = inspect.getattr_static(owner, name)
    assert inspect.isfunction(method), f"{owner.__name__}.{name}"
    inspect.signature(method).bind(object(), *call)  # TypeError when the shape moved
    assert not inspect.iscoroutinefunction(method)  # called without await


def test_the_installed_docket_builds_what_the_compat_module_reads() -> None:
    """``ExecutionProgress(docket, key)`` as ``queue_progress_read`` builds it, and the
    ``progress`` of an ``Execution`` that ``apply_execution_reads`` applies to."""
    docket = Docket(name=f"reading-{secrets.token_hex(4)}", url="memory://")
    inspect.signature(ExecutionProgress).bind(docket, "k")
    execution = Execution(
        docket=docket,
        function=body,
        args=(),
        kwargs={},
        key="k",
        when=datetime.now(UTC),
        attempt=1,
    )
    assert isinstance(execution.progress, ExecutionProgress)


def docket_modules() -> dict[str, str]:
    """The source of each module of ``src/mcp_adapter`` that imports Docket or lives in
    ``tasks/`` (where Docket's objects are handled), but the compat module."""
    package = Path(compat.__file__).parent
    found = {}
    for path in sorted(package.rglob("*.py")):
        source = path.read_text()
        imports = {
            alias.name if isinstance(node, ast.Import) else node.module or ""
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        }
        if path.parent.name == "tasks" or any(i.split(".")[0] == "docket" for i in imports):
            found[str(path.relative_to(package))] = source
    found.pop(Path(compat.__file__).name, None)
    return found


def test_no_other_module_reads_a_private_attribute_of_docket() -> None:
    modules = docket_modules()
    assert "tasks/reading.py" in modules
    assert {
        name: reads for name, source in modules.items() if (reads := private_reads(source))
    } == {}
