"""Putting a compiled catalog on the SDK's low-level ``mcp.server.Server``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

from mcp.server import Server as SdkServer
from mcp.server.auth.provider import AccessToken
from mcp.server.request_state import RequestStateSecurity
from mcp.shared.inbound import X_MCP_HEADER_KEY

from container import Container
from mcp_adapter.compiled.catalog import Catalog, CompiledPrompt, CompiledResource
from mcp_adapter.compiled.handles import StateHandles
from mcp_adapter.declare.request import Transport
from mcp_adapter.dispatch import Dispatcher
from mcp_adapter.dispatch.inflight import CallsInFlight
from mcp_adapter.dispatch.threads import Threads
from mcp_adapter.input.single_use import single_use_state
from mcp_adapter.notifications import ClientLogger, SubscriptionLimits
from mcp_adapter.notifications.notifier import notifier_of
from mcp_adapter.notifications.serve import (
    BusChoice,
    Delivery,
    Notifications,
    NotifyingServer,
)
from mcp_adapter.serving.apps import declare_apps, resources_listing, tools_listing
from mcp_adapter.stores.handles import HandleStore, MemoryHandles
from mcp_adapter.stores.rounds import MemoryRounds, RoundLedger
from mcp_adapter.tasks.engine import TaskEngine
from mcp_adapter.tasks.extension import TasksExtension, install, with_tasks
from mcp_adapter.tasks.watch import TaskWatch


def header_schemas(catalog: Catalog) -> Callable[[str], Mapping[str, Any] | None]:
    """The input schemas the 2026-07-28 HTTP transport must check ``Mcp-Param-*`` headers
    against, looked up without running ``tools/list`` on every call.

    Only schemas that declare ``x-mcp-header`` positions are returned: for the
    others there is nothing a header could contradict, and the SDK skips the check.
    """
    declaring = {
        name: tool.modern.input_schema
        for name, tool in catalog.tools.items()
        if X_MCP_HEADER_KEY in json.dumps(tool.modern.input_schema)
    }
    return declaring.get


def build_sdk_server(
    catalog: Catalog,
    container: Container,
    *,
    transport: Transport = "memory",
    request_state_security: RequestStateSecurity | None = None,
    caller: AccessToken | None = None,
    threads: Threads | None = None,
    calls: CallsInFlight | None = None,
    subscription_bus: BusChoice = None,
    subscription_limits: SubscriptionLimits | None = None,
    delivery: Delivery | None = None,
    handles: HandleStore | None = None,
    rounds: RoundLedger | None = None,
) -> SdkServer[Any]:
    """A low-level SDK server whose handlers are the dispatcher's.

    Capabilities follow from the handlers: a catalog without tools does not
    advertise the tools capability. The SDK's ``RequestStateBoundary`` seals
    every 2026-07-28 ``requestState`` this server hands out and refuses any it
    did not seal (``-32602 Invalid or expired requestState``), under
    ``request_state_security`` (default: a key of this process only, as the
    SDK's ``MCPServer`` does) with the server's name as audience; each state it
    opens is good for one retry, the rounds answered recorded in ``rounds``
    (default: a ``MemoryRounds()`` of its own; replicas share one in Redis).

    ``threads`` are the worker threads of its sync work (default: ``Server.threads`` of
    its own) and ``calls`` bounds its calls in flight (default: unbounded); an app
    that builds several servers for one deployment gives them the same ones.

    Change notifications (docs/notifications.md) go through ``subscription_bus``
    (default: an in-memory bus of this server; ``False``: no subscriptions),
    within ``subscription_limits``, as far as ``delivery`` says the transport
    carries them; the container's ``Notifier`` publishes on the bus while the
    server serves (its lifespan).

    State handles (docs/state.md) are kept in ``handles``, whose owner runs
    ``handles.running()`` (the sweep of expired handles, and every handle finalized
    at its end) around serving: ``http_app`` does. Without it, the server keeps
    its own in memory, with the default limits, and its lifespan runs that.
    """
    # bound first: binding it moves the container's generation, which the dispatcher
    # would otherwise read as an override to recompile for
    notifier = notifier_of(container)
    own_handles = handles is None
    handles = MemoryHandles() if handles is None else handles
    dispatcher = Dispatcher(
        catalog,
        container,
        transport=transport,
        caller=caller,
        threads=threads,
        calls=calls,
        handles=handles,
    )
    handlers: dict[str, Any] = {}
    if catalog.tools:
        handlers["on_list_tools"] = tools_listing(catalog, dispatcher)
        handlers["on_call_tool"] = dispatcher.call_tool
    if catalog.resources or catalog.templates:
        listings = resources_listing(catalog, dispatcher)
        handlers["on_list_resources"], handlers["on_list_resource_templates"] = listings
        handlers["on_read_resource"] = dispatcher.read_resource
    if catalog.prompts:
        handlers["on_list_prompts"] = dispatcher.list_prompts
        handlers["on_get_prompt"] = dispatcher.get_prompt
    completable: list[CompiledPrompt | CompiledResource] = [
        *catalog.prompts.values(),
        *catalog.templates,
    ]
    if any(component.completion is not None for component in completable):
        handlers["on_completion"] = dispatcher.complete
    lists = [
        kind
        for kind, present in (
            ("tools", bool(catalog.tools)),
            ("resources", bool(catalog.resources or catalog.templates)),
            ("prompts", bool(catalog.prompts)),
        )
        if present
    ]
    notifications = Notifications(
        notifier,
        dispatcher,
        lists=lists,
        logs=catalog.takes(ClientLogger),
        bus=subscription_bus,
        limits=subscription_limits,
        delivery=delivery,
    )
    lifespan: Any = notifications.lifespan
    extension = None
    if catalog.tasks is not None:  # some tool may run as a task (docs/tasks.md)
        engine = TaskEngine(catalog.tasks, catalog.name)
        engine.bind(dispatcher.run_task)
        dispatcher.tasks = engine
        extension = TasksExtension(engine, dispatcher.request)
        if notifications.listening is not None:
            notifications.listening.followed = TaskWatch(engine, dispatcher.request)
        lifespan = with_tasks(lifespan, engine)
    if own_handles and uses_handles(catalog):
        lifespan = _with_handles(lifespan, handles)
    server = NotifyingServer(
        catalog.name,
        get_tool_input_schema=header_schemas(catalog),
        version=catalog.version,
        title=catalog.title,
        description=catalog.description,
        instructions=catalog.instructions,
        website_url=catalog.website_url,
        icons=list(catalog.icons) if catalog.icons else None,
        lifespan=lifespan,
        **handlers,
    )
    if extension is not None:
        install(server, extension)
    for declared in catalog.protocol_extensions:
        install(server, declared)
    declare_apps(server, catalog)
    notifications.install(server)
    server.cache_hints = dict(catalog.cache_hints)  # checked at compile, as Server() checks them
    security = request_state_security or RequestStateSecurity.ephemeral()
    ledger = MemoryRounds() if rounds is None else rounds
    server.middleware.append(single_use_state(security, ledger, audience=catalog.name))
    return server


def uses_handles(catalog: Catalog) -> bool:
    """Whether a tool mints (takes ``StateHandles``) or takes back a state handle: else
    no handle store runs."""
    return catalog.takes(StateHandles) or any(t.handle for t in catalog.tools.values())


def _with_handles(lifespan: Any, store: HandleStore) -> Any:
    """``lifespan`` inside the store's own: its sweep runs while the server serves, and
    every handle left open is finalized when it stops."""

    @asynccontextmanager
    async def serving(server: Any) -> AsyncIterator[Any]:
        async with store.running(), lifespan(server) as state:
            yield state

    return serving
