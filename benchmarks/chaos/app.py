"""The server the chaos run deploys: every kind of call the run drives, each answer marked
with its caller so the harness can tell when one identity sees another's data.

Callers are bearer tokens ``chaos-<n>`` (subject ``id<n>``, :class:`ChaosVerifier`). Every
tool answers ``<<id<n>>>`` (the caller's mark) with the ``nonce`` it was sent; the harness
checks both on each answer. Bodies whose side effect the docs promise happens once
(``once``, the task bodies) record it in the *ledger*, a ``redis-server`` the harness owns
and never faults (``CHAOS_LEDGER``): ``SET NX`` of the operation's id, and a second run of
one id is pushed to ``twice``, which the harness reads after the run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Annotated

import anyio
import redis
from mcp.server.auth.provider import AccessToken

from container import Container, Lifetime
from mcp_adapter import (
    Elicit,
    McpRequest,
    McpResponse,
    Resolve,
    Resource,
    Server,
    StateHandle,
    StateHandles,
    Tasks,
    Tool,
)
from mcp_adapter.layers import ResponseLimit, Timing
from mcp_adapter.notifications import Notifier
from schemas import Schema

TOKEN = re.compile(r"chaos-(\d{1,4})")
LEDGER_ENV = "CHAOS_LEDGER"
TWICE = "twice"
"""The ledger's list of operation ids whose body ran more than once."""
REDELIVERY_TIMEOUT = 15.0
"""Longer than a Sentinel failover (``deploy.DOWN_AFTER_MS`` and the promotion after it):
in a failover the worker's lease renewals go to the old primary and are lost with it, and
with a shorter timeout another worker would take a running task over and end it
``failed`` (tests/replicas/sentinel_app.py)."""
TASK_TTL = 3600.0
"""Seconds a task and its result stay readable: past the length of a long run."""


def mark(subject: str) -> str:
    return f"<<{subject}>>"


class ChaosVerifier:
    """``chaos-<n>`` is the caller ``id<n>``; anything else is refused."""

    async def verify_token(self, token: str) -> AccessToken | None:
        found = TOKEN.fullmatch(token)
        if found is None:
            return None
        subject = f"id{found.group(1)}"
        return AccessToken(token=token, client_id="chaos", subject=subject, scopes=[])


def subject_of(request: McpRequest) -> str:
    identity = request.identity
    return "anonymous" if identity is None or identity.subject is None else identity.subject


def ledger() -> redis.Redis:
    return redis.Redis.from_url(os.environ[LEDGER_ENV], socket_timeout=5)


def record_once(operation: str) -> None:
    """Note that ``operation``'s body ran; a second run is pushed to ``twice``."""
    with ledger() as store:
        if not store.set(f"op:{operation}", os.environ.get("REPLICA", "?"), nx=True):
            store.rpush(TWICE, operation)


class Echo(Schema):
    nonce: str


class Once(Schema):
    nonce: str
    operation: str


class Confirm(Schema):
    ok: bool


class EchoSync(Tool[Echo]):
    """A sync handler (a worker thread), no layer."""

    name = "echo_sync"

    def handle(self, payload: Echo, request: McpRequest) -> McpResponse:
        return McpResponse.text(f"{mark(subject_of(request))} {payload.nonce}")


class EchoAsync(Tool[Echo]):
    """An async handler behind two layers."""

    name = "echo_async"
    middleware = (Timing(stage="call"), ResponseLimit(64_000, stage="call"))

    async def handle(self, payload: Echo, request: McpRequest) -> McpResponse:
        await anyio.sleep(0)
        return McpResponse.text(f"{mark(subject_of(request))} {payload.nonce}")


class OnceTool(Tool[Once]):
    """A body with a side effect: one ledger entry per operation id."""

    name = "once"

    def handle(self, payload: Once, request: McpRequest) -> McpResponse:
        record_once(payload.operation)
        return McpResponse.text(f"{mark(subject_of(request))} {payload.nonce}")


async def confirm(payload: Echo) -> Elicit[Confirm]:
    return Elicit(f"Go on with {payload.nonce}?", Confirm)


async def confirm_operation(payload: Once) -> Elicit[Confirm]:
    return Elicit(f"Run {payload.operation}?", Confirm)


class AskTool(Tool[Echo]):
    """Asks one question (an input round in either era), then answers."""

    name = "ask"

    async def handle(
        self, payload: Echo, request: McpRequest, answer: Annotated[Confirm, Resolve(confirm)]
    ) -> McpResponse:
        return McpResponse.text(f"{mark(subject_of(request))} {payload.nonce} {answer.ok}")


class JobTool(Tool[Once]):
    """A short task body with a side effect."""

    name = "job"
    task_support = "required"

    async def handle(self, payload: Once, request: McpRequest) -> McpResponse:
        await anyio.sleep(0.2)
        record_once(payload.operation)
        return McpResponse.text(f"{mark(subject_of(request))} {payload.nonce}")


class JobAskTool(Tool[Once]):
    """A task that asks for input before its body runs."""

    name = "job_ask"
    task_support = "required"

    async def handle(
        self,
        payload: Once,
        request: McpRequest,
        answer: Annotated[Confirm, Resolve(confirm_operation)],
    ) -> McpResponse:
        record_once(payload.operation)
        return McpResponse.text(f"{mark(subject_of(request))} {payload.nonce} {answer.ok}")


class Box:
    """A handle's session service: a connection to where the box's items are kept. Replicas
    each build their own (docs/state.md), so the items live in Redis, keyed by the handle
    (the ledger's server: the one Redis the run never faults)."""

    def __init__(self, handle: StateHandle) -> None:
        self.key = f"box:{handle}"
        self.store = ledger()

    def put(self, item: str) -> list[str]:
        self.store.rpush(self.key, item)
        self.store.expire(self.key, 3600)
        return [value.decode() for value in self.store.lrange(self.key, 0, -1)]


def box(handle: StateHandle) -> Iterator[Box]:
    opened = Box(handle)
    try:
        yield opened
    finally:
        opened.store.close()


class OpenBox(Tool):
    name = "open_box"

    def handle(self, handles: StateHandles) -> McpResponse:
        return McpResponse.text(handles.open())


class PutInput(Schema):
    box: StateHandle
    item: str


class PutTool(Tool[PutInput]):
    name = "put"

    def handle(self, payload: PutInput, stored: Box, request: McpRequest) -> McpResponse:
        items = stored.put(payload.item)
        return McpResponse.text(f"{mark(subject_of(request))} {','.join(items)}")


class CloseInput(Schema):
    box: StateHandle


class CloseBox(Tool[CloseInput]):
    name = "close_box"

    async def handle(self, payload: CloseInput, handles: StateHandles) -> McpResponse:
        await handles.close(payload.box)
        return McpResponse.text("closed")


class TouchTool(Tool):
    """Announces that the caller's own secret changed."""

    name = "touch"

    async def handle(self, request: McpRequest, notifier: Notifier) -> McpResponse:
        subject = subject_of(request)
        await notifier.resource_updated(f"secret://{subject}")
        return McpResponse.text(mark(subject))


class Secret(Resource):
    """Each caller's own secret: hidden from everyone else."""

    name = "secret"
    uri_template = "secret://{owner}"

    def shouldRegister(self, request: McpRequest) -> bool:
        owner = request.uri_variables.get("owner")
        return owner is None or owner == subject_of(request)

    def handle(self, owner: str) -> McpResponse:
        return McpResponse.text(f"{mark(owner)} secret")


def build_container() -> Container:
    container = Container()
    container.bind(Box, box, Lifetime.SESSION)
    return container


class ChaosServer(Server):
    name = "chaos"
    tools = (
        EchoSync,
        EchoAsync,
        OnceTool,
        AskTool,
        JobTool,
        JobAskTool,
        OpenBox,
        PutTool,
        CloseBox,
        TouchTool,
    )
    resources = (Secret,)
    tasks = Tasks(
        ttl=TASK_TTL,
        max_running=200,
        max_running_per_identity=20,
        redelivery_timeout=REDELIVERY_TIMEOUT,
        shutdown_grace=2.0,
    )
