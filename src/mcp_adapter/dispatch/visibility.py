"""Visibility: whether a request may see a component (``shouldRegister``) and use it
(``authorize``), in a call and in a listing; hidden is unknown, refused is an
authorization error."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import anyio.from_thread
from mcp import MCPError

from container import Scope
from mcp_adapter.compiled.catalog import CompiledComponent
from mcp_adapter.compiled.handlers import Offload
from mcp_adapter.declare.request import McpRequest
from mcp_adapter.dispatch.guard import Guard
from mcp_adapter.dispatch.paging import next_cursor, page_index
from mcp_adapter.dispatch.scopes import Given, Scopes
from mcp_adapter.dispatch.threads import Threads
from mcp_adapter.errors import IncidentError, forbidden, unknown
from mcp_adapter.interrupts import HandlerExited

Entry = TypeVar("Entry")


class Visibility(Scopes, Guard):
    """Part of the dispatcher (``core.DispatchCore``): a component's hooks, run with
    their own injected services."""

    threads: Threads

    async def visible(
        self,
        component: CompiledComponent,
        scope: Any,
        request: McpRequest | None,
        threads: Offload | None = None,
    ) -> tuple[bool, bool]:
        """``(registered, authorized)`` for this request; hooks run with injection (the
        instance is built only when a hook is its method; a sync hook runs on ``threads``,
        by default the server's)."""
        hooks = component.hooks
        if not hooks.any:
            return True, True
        offload = self.threads if threads is None else threads
        instance = await component.instance(scope) if hooks.needs_instance else None
        for plan in hooks.should_register:
            if not await plan.invoke(instance, scope, request, None, None, offload):
                return False, False
        for plan in hooks.authorize:
            if not await plan.invoke(instance, scope, request, None, None, offload):
                return True, False
        return True, True

    async def _gate(
        self,
        visible: Callable[..., Awaitable[tuple[bool, bool]]],
        kind: str,
        component: CompiledComponent,
        scope: Any,
        request: McpRequest | None,
    ) -> None:
        """Hidden is unknown, refused is ``forbidden``; ``visible``: the call's mode's."""
        registered, authorized = await visible(component, scope, request)
        if not registered:
            raise self.hidden(kind, component.name)
        if not authorized:
            raise forbidden(kind, component.name)

    def hidden(self, kind: str, name: str) -> MCPError:
        """The answer to a call of a component its hooks hide: exactly an unknown one's."""
        return unknown(kind, name)

    async def _filter(
        self,
        ctx: Any,
        page: Sequence[tuple[CompiledComponent, Entry]],
        given: Given | None = None,
    ) -> list[Entry]:
        if not any(component.hooks.any for component, _ in page):
            return [entry for _, entry in page]
        request = self.request(ctx, given)
        hooked = [component for component, _ in page if component.hooks.any]
        in_thread = [component for component in hooked if component.sync_hooks]

        def all_in_thread() -> list[Entry]:
            # Every hook of the page is sync: the listing's scope lives and ends on the
            # worker thread its hooks run on, so their services may be thread-bound.
            with self.scope(ctx, request) as scope:
                verdicts = iter(visible_all(in_thread, scope, request))
                return [
                    entry for component, entry in page if not component.hooks.any or next(verdicts)
                ]

        async def run_hooks() -> list[Entry]:
            if len(in_thread) == len(hooked):
                return await self.threads.run(all_in_thread)
            listed: list[Entry] = []
            async with self.scope(ctx, request) as scope:
                verdicts = iter(
                    await self.threads.run(visible_all, in_thread, scope, request)
                    if in_thread
                    else ()
                )
                for component, entry in page:
                    if not component.hooks.any:
                        shown = True
                    elif component.sync_hooks:
                        shown = next(verdicts)
                    else:
                        shown = all(await self.visible(component, scope, request))
                    if shown:
                        listed.append(entry)
            return listed

        def failed(incident: str) -> list[Entry]:
            raise IncidentError("Listing failed", incident)

        return await self._guarded("listing", str(getattr(ctx, "method", "")), run_hooks, failed)

    async def _visible_page(
        self,
        ctx: Any,
        given: Given | None,
        cursor: str | None,
        pages: Sequence[Sequence[Any]],
    ) -> tuple[list[Any], int, str | None]:
        """The entries of the page of ``pages`` at ``cursor`` that this request may see
        (each component paired with its ``entry``), the page's index, and the next cursor."""
        index = page_index(cursor, len(pages))
        listed = await self._filter(ctx, [(c, c.entry) for c in pages[index]], given)
        return listed, index, next_cursor(index, len(pages))


def verdict(
    component: CompiledComponent, scope: Scope | None, request: McpRequest | None
) -> tuple[bool, bool]:
    """``(registered, authorized)`` from ``sync_hooks``, on the calling thread (``scope``:
    ``None`` when its hooks need none, ``CompiledComponent.scoped_hooks``)."""
    hooks = component.hooks
    if not hooks.any:
        return True, True
    try:
        instance = component.build(scope) if hooks.needs_instance else None
        for plan in hooks.should_register:
            if not plan.call_sync(instance, scope, request):
                return False, False
        for plan in hooks.authorize:
            if not plan.call_sync(instance, scope, request):
                return True, False
    except GeneratorExit as exc:  # see mcp_adapter.interrupts.HandlerExited
        raise HandlerExited(
            f"a visibility hook of {component.name!r} raised GeneratorExit"
        ) from exc
    return True, True


def visible_all(
    components: Sequence[CompiledComponent], scope: Any, request: McpRequest | None
) -> list[bool]:
    """Whether each component is listed: its ``sync_hooks`` run here, in order.

    Runs in one worker thread for a whole page (``Visibility._filter``): each
    component is built, and its hooks get their services, exactly as
    ``Visibility.visible`` does on the loop; the first hook that raises ends
    the batch. A cancelled listing stops between components, as it would
    between thread hops.
    """
    verdicts: list[bool] = []
    for component in components:
        anyio.from_thread.check_cancelled()
        verdicts.append(all(verdict(component, scope, request)))
    return verdicts
