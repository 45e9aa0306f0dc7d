"""The mixed load: a fixed number of clients, each running one operation after another
as a random identity, every answer checked (docs: input.md, tasks.md, state.md).

Operations: inline calls (sync, async behind layers, a side effect recorded once), an
input round of each era (2026-07-28 retried by hand, the same retry replayed and sent
by another identity, both of which must be refused; 2025-11-25 on a stateful session,
by hand: :mod:`benchmarks.chaos.legacy`), task tools (one that asks, answered with
``tasks/update``),
state handles, resource reads (one's own, and another's which must be refused), and
``touch``, which the listeners (:mod:`benchmarks.chaos.streams`) must hear of.

State handles are in Redis (``serve --redis``): a handle's calls go through the
balancer's round robin, each to any replica.
"""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import httpx2

from benchmarks.chaos import legacy
from benchmarks.chaos.app import TASK_TTL
from benchmarks.chaos.deploy import Deployment
from benchmarks.chaos.invariants import FAILOVER_LAG, Tally
from benchmarks.chaos.wire import Answer, call, on_task, send

BOUND = 30.0
"""Seconds any one request may take before it counts as unanswered: past the server's
own bounds (Redis commands 5 s, ``Tasks.store_timeout`` 5 s) with room for a loaded
machine."""
TASK_BOUND = 90.0
"""Seconds an accepted task may take to end: its body, or a worker's death noticed after
``Tasks.redelivery_timeout`` (15 s here, at most about 1.6 times it), Redis faults, load."""
ENDED = ("completed", "failed", "cancelled")
UNKNOWN_TASK = -32602
"""``tasks/get``'s code for a task it does not know."""
LISTENERS = 4
"""Identities ``0 .. LISTENERS - 1`` each have a listen stream and a 2025-11-25 session
subscribed (:mod:`benchmarks.chaos.streams`); ``touch`` is called as one of them."""


def token(identity: int) -> str:
    return f"chaos-{identity}"


def subject(identity: int) -> str:
    return f"id{identity}"


def nonce() -> str:
    return secrets.token_hex(6)


@dataclass
class Task:
    task_id: str
    identity: int
    tool: str
    nonce: str
    accepted: float
    phase: str = ""
    status: str = "working"
    result: dict[str, Any] | None = None
    seen: list[str] = field(default_factory=list)
    """Each status ``tasks/get`` answered, when it changed (seconds after acceptance)."""
    changed: float = 0.0
    """When ``status`` was first seen (``time.monotonic``)."""

    def saw(self, status: str) -> None:
        if status != self.status or not self.seen:
            self.seen.append(f"{status}@{time.monotonic() - self.accepted:.0f}s")
            self.changed = time.monotonic()
        self.status = status


@dataclass
class Load:
    deployment: Deployment
    tally: Tally
    identities: int
    http: httpx2.AsyncClient
    tasks: dict[str, Task] = field(default_factory=dict)
    stopping: bool = False

    @property
    def url(self) -> str:
        return self.deployment.url

    def other(self, identity: int) -> int:
        return (identity + 1 + random.randrange(self.identities - 1)) % self.identities

    def echoed(self, kind: str, answer: Answer, identity: int, expected: str) -> None:
        if self.tally.answered(kind, answer, subject(identity)):
            texts = answer.texts()
            if answer.result is not None and answer.result.get("isError"):
                return  # a tool error is an answer (a fault's)
            if texts != [expected]:
                self.tally.violation("wrong answer", f"{kind}: {texts!r} for {expected!r}")

    async def echo(self, identity: int, tool: str) -> None:
        value = nonce()
        answer = await call(self.http, self.url, token(identity), tool, {"nonce": value}, BOUND)
        self.echoed(tool, answer, identity, f"<<{subject(identity)}>> {value}")

    async def once(self, identity: int) -> None:
        value = nonce()
        arguments = {"nonce": value, "operation": secrets.token_hex(8)}
        answer = await call(self.http, self.url, token(identity), "once", arguments, BOUND)
        self.echoed("once", answer, identity, f"<<{subject(identity)}>> {value}")

    async def ask_modern(self, identity: int) -> None:
        value = nonce()
        arguments = {"nonce": value}
        first = await call(self.http, self.url, token(identity), "ask", arguments, BOUND)
        if not self.tally.answered("ask 2026 (round)", first, subject(identity)):
            return
        assert first.result is not None
        if first.result.get("resultType") != "input_required":
            self.tally.violation("wrong answer", f"ask: no input round: {first.text[:200]}")
            return
        (key,) = first.result["inputRequests"]
        retry = {
            "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
            "requestState": first.result["requestState"],
        }
        stranger = self.other(identity)
        taken = await call(self.http, self.url, token(stranger), "ask", arguments, BOUND, **retry)
        if self.tally.answered("ask 2026 (another's state)", taken, subject(stranger)):
            self.tally.violation(
                "isolation", f"{subject(stranger)} used {subject(identity)}'s round"
            )
        answer = await call(self.http, self.url, token(identity), "ask", arguments, BOUND, **retry)
        self.echoed("ask 2026", answer, identity, f"<<{subject(identity)}>> {value} True")
        if not answer.ok:
            return
        replay = await call(self.http, self.url, token(identity), "ask", arguments, BOUND, **retry)
        if self.tally.answered("ask 2026 (replayed)", replay, subject(identity)):
            self.tally.violation(
                "round reused", f"a replayed retry was answered: {replay.text[:200]}"
            )

    async def ask_legacy(self, identity: int) -> None:
        """A 2025-11-25 session (stateful, kept to its replica by haproxy) answering the
        question the server sends while the call waits."""
        value = nonce()
        answer = await legacy.ask(self.url, token(identity), {"nonce": value}, BOUND)
        self.echoed("ask 2025", answer, identity, f"<<{subject(identity)}>> {value} True")

    async def task(self, identity: int, tool: str) -> None:
        value = nonce()
        arguments = {"nonce": value, "operation": secrets.token_hex(8)}
        created = await call(self.http, self.url, token(identity), tool, arguments, BOUND)
        if not self.tally.answered(f"{tool} (start)", created, subject(identity)):
            return
        assert created.result is not None
        task_id = created.result.get("taskId")
        if created.result.get("resultType") != "task" or not isinstance(task_id, str):
            self.tally.violation("wrong answer", f"{tool}: no task: {created.text[:200]}")
            return
        task = Task(task_id, identity, tool, value, time.monotonic(), phase=self.tally.phase)
        self.tasks[task_id] = task
        self.tally.tasks_accepted += 1
        stranger = self.other(identity)
        peek = await on_task(self.http, self.url, token(stranger), "tasks/get", task_id, BOUND)
        if self.tally.answered("tasks/get (another's)", peek, subject(stranger)):
            self.tally.violation(
                "isolation", f"{subject(stranger)} read {subject(identity)}'s task"
            )
        await self.follow(task, answer_input=True)

    async def follow(self, task: Task, *, answer_input: bool) -> None:
        """``tasks/get`` until the task ended (answering its question), within the bound."""
        deadline = task.accepted + TASK_BOUND
        while time.monotonic() < deadline:
            got = await on_task(
                self.http, self.url, token(task.identity), "tasks/get", task.task_id, BOUND
            )
            if self.tally.answered("tasks/get", got, subject(task.identity)):
                assert got.result is not None
                task.saw(got.result.get("status", "?"))
                if task.status in ENDED:
                    task.result = got.result
                    return
                if task.status == "input_required" and answer_input:
                    ((key, _),) = got.result["inputRequests"].items()
                    answers = {key: {"action": "accept", "content": {"ok": True}}}
                    update = await on_task(
                        self.http,
                        self.url,
                        token(task.identity),
                        "tasks/update",
                        task.task_id,
                        BOUND,
                        inputResponses=answers,
                    )
                    if self.tally.answered("tasks/update", update, subject(task.identity)):
                        task.seen.append(f"answered@{time.monotonic() - task.accepted:.0f}s")
            elif self.forgotten(task, got):
                return  # the reread at the end counts it
            if self.stopping and not answer_input:
                return
            await asyncio.sleep(0.25)

    def forgotten(self, task: Task, got: Answer) -> bool:
        """Whether ``got`` says the task is unknown, once a failover that can have lost it
        (its creation or its last change) is over: it will not come back."""
        if (got.error or {}).get("code") != UNKNOWN_TASK:
            return False
        fault = self.tally.failover_at(task.changed or task.accepted)
        ends = [end for name, _, end in self.tally.failovers if name == fault]
        return bool(ends) and time.monotonic() > max(ends) + FAILOVER_LAG

    async def handles(self, identity: int) -> None:
        url = self.url  # any replica serves any handle (its store is in Redis)
        mine = token(identity)
        opened = await call(self.http, url, mine, "open_box", {}, BOUND)
        if not self.tally.answered("open_box", opened, subject(identity)) or opened.texts() == []:
            return
        if (opened.result or {}).get("isError"):
            return
        (handle,) = opened.texts()
        expected = ""
        for item in ("a", "b"):
            put = await call(self.http, url, mine, "put", {"box": handle, "item": item}, BOUND)
            expected = f"{expected},{item}" if expected else item
            self.echoed("put", put, identity, f"<<{subject(identity)}>> {expected}")
            if not put.ok or put.result.get("isError"):  # type: ignore[union-attr]
                return
        stranger = self.other(identity)
        stolen = await call(
            self.http, url, token(stranger), "put", {"box": handle, "item": "x"}, BOUND
        )
        taken = self.tally.answered("put (another's handle)", stolen, subject(stranger))
        if taken and not (stolen.result or {}).get("isError"):
            self.tally.violation("isolation", f"{subject(stranger)} used a handle not theirs")
        closed = await call(self.http, url, mine, "close_box", {"box": handle}, BOUND)
        self.tally.answered("close_box", closed, subject(identity))

    async def read(self, identity: int) -> None:
        mine = f"secret://{subject(identity)}"
        own = await send(
            self.http, self.url, token(identity), "resources/read", mine, {"uri": mine}, BOUND
        )
        if self.tally.answered("resources/read", own, subject(identity)):
            contents = (own.result or {}).get("contents") or [{}]
            if contents[0].get("text") != f"<<{subject(identity)}>> secret":
                self.tally.violation("wrong answer", f"read {mine}: {own.text[:200]}")
        theirs = f"secret://{subject(self.other(identity))}"
        peek = await send(
            self.http, self.url, token(identity), "resources/read", theirs, {"uri": theirs}, BOUND
        )
        if self.tally.answered("resources/read (another's)", peek, subject(identity)):
            self.tally.violation("isolation", f"{subject(identity)} read {theirs}")

    async def touch(self, identity: int) -> None:
        identity %= LISTENERS  # the identities the listeners listen as
        answer = await call(self.http, self.url, token(identity), "touch", {}, BOUND)
        self.tally.answered("touch", answer, subject(identity))

    async def one(self, identity: int) -> None:
        """One operation, drawn by weight."""
        kind = random.choices(OPERATIONS, WEIGHTS)[0]
        if kind in ("echo_sync", "echo_async"):
            await self.echo(identity, kind)
        elif kind in ("job", "job_ask"):
            await self.task(identity, kind)
        else:
            await getattr(self, kind)(identity)

    async def client(self) -> None:
        """Operations one after another until the run stops the load."""
        while not self.stopping:
            await self.one(random.randrange(self.identities))

    async def settle(self, clients: int) -> None:
        """At the end: every accepted task followed until it ended (bounded), its result
        read again and checked, by ``clients`` readers at once."""
        self.stopping = True
        pending = [task for task in self.tasks.values() if task.status not in ENDED]
        await asyncio.gather(*(self.follow(task, answer_input=True) for task in pending))
        queue = list(self.tasks.values())

        async def reader() -> None:
            while queue:
                await self.reread(queue.pop())

        await asyncio.gather(*(reader() for _ in range(clients)))

    async def reread(self, task: Task) -> None:
        """An accepted task has ended, and its result is still readable and right."""
        if task.status not in ENDED:
            history = " ".join(task.seen)
            detail = f"{task.tool} {task.task_id}: {history}, accepted {task.phase}"
            self.tally.loss("task lost", detail, task.changed or task.accepted)
            return
        self.tally.tasks_terminal[task.status] += 1
        if time.monotonic() - task.accepted > TASK_TTL - BOUND:
            return  # past (or about to pass) its TTL: absent, as documented
        for _ in range(3):  # the faults are over: a refusal now is the task's
            again = await on_task(
                self.http, self.url, token(task.identity), "tasks/get", task.task_id, BOUND
            )
            if self.tally.answered("tasks/get (ended)", again, subject(task.identity)):
                break
            await asyncio.sleep(1.0)
        if not again.ok:
            self.tally.loss("task lost", f"{task.task_id}: unreadable after it ended", task.changed)
            return
        assert again.result is not None
        if again.result.get("status") != task.status:
            history = " ".join(task.seen)
            detail = f"{task.tool} {task.task_id}: {history}, then {again.result.get('status')}"
            self.tally.loss("task lost", detail, task.changed)
            return
        if task.status == "completed":
            texts = [p.get("text") for p in again.result["result"]["content"]]
            wanted = f"<<{subject(task.identity)}>> {task.nonce}"
            if not texts or not str(texts[0]).startswith(wanted):
                self.tally.violation("wrong answer", f"task {task.task_id}: {texts!r}")


OPERATIONS = (
    "echo_sync",
    "echo_async",
    "once",
    "ask_modern",
    "ask_legacy",
    "job",
    "job_ask",
    "handles",
    "read",
    "touch",
)
WEIGHTS = (4, 4, 3, 3, 1, 2, 1, 2, 2, 2)
