"""``resources/list``, ``resources/templates/list`` and ``resources/read``."""

from __future__ import annotations

import functools
from collections.abc import Awaitable
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from mcp import types

from mcp_adapter.compiled.catalog import (
    CompiledResource,
)
from mcp_adapter.declare.middleware import Call, RequestCall
from mcp_adapter.declare.request import McpRequest, freeze
from mcp_adapter.dispatch import stage, telemetry
from mcp_adapter.dispatch.cache_hints import combined, hinted
from mcp_adapter.dispatch.core import DispatchCore, Given, Mode
from mcp_adapter.dispatch.inflight import Place
from mcp_adapter.dispatch.inputs import handler_asked
from mcp_adapter.dispatch.snapshot import is_modern
from mcp_adapter.dispatch.telemetry import Tracing
from mcp_adapter.dispatch.visibility import verdict
from mcp_adapter.errors import (
    Forbidden,
    IncidentError,
    NotFound,
    forbidden,
    resource_not_found,
)
from mcp_adapter.input.asking import Asked, asking
from mcp_adapter.input.resolution import Resolution, Retry
from mcp_adapter.notifications.gate import KeptRequests


class ResourceReads(DispatchCore):
    """Serving resources: a static one first, else the template that matches."""

    # -- resources ------------------------------------------------------------------

    async def list_resources(
        self, ctx: Any, params: types.PaginatedRequestParams | None, given: Given | None = None
    ) -> types.ListResourcesResult:
        method = "resources/list"
        return await self._listing(ctx, method, params, given, self.list_resources, self._resources)

    async def _resources(
        self, ctx: Any, given: Given | None, cursor: str | None
    ) -> types.ListResourcesResult:
        pages, hints = self._resource_pages, self._resource_hints
        listed, index, after = await self._visible_page(ctx, given, cursor, pages)
        resources = [entry for entry in listed if isinstance(entry, types.Resource)]
        return hinted(
            types.ListResourcesResult(resources=resources, next_cursor=after), hints[index]
        )

    async def list_resource_templates(
        self, ctx: Any, params: types.PaginatedRequestParams | None, given: Given | None = None
    ) -> types.ListResourceTemplatesResult:
        method, again = "resources/templates/list", self.list_resource_templates
        return await self._listing(ctx, method, params, given, again, self._templates)

    async def _templates(
        self, ctx: Any, given: Given | None, cursor: str | None
    ) -> types.ListResourceTemplatesResult:
        listed, index, after = await self._visible_page(ctx, given, cursor, self._template_pages)
        result = types.ListResourceTemplatesResult(
            resource_templates=[e for e in listed if isinstance(e, types.ResourceTemplate)],
            next_cursor=after,
        )
        return hinted(result, self._template_hints[index])

    def find_resource(self, uri: str) -> tuple[CompiledResource, dict[str, Any]] | None:
        """The resource that serves ``uri``: a static one first, else the matching template."""
        static = self.catalog.resources.get(uri)
        if static is not None:
            return static, {}
        return self.find_template(uri)

    def known_as(self, uri: str) -> str | None:
        """How the catalog knows the resource that serves ``uri``: its URI template (its
        URI when static), ``None`` when none does."""
        found = self.find_resource(uri)
        if found is None:
            return None
        resource = found[0]
        return resource.uri_template_text or resource.uri

    def find_template(self, uri: str) -> tuple[CompiledResource, dict[str, Any]] | None:
        for template in self.catalog.templates:
            variables = template.match(uri)
            if variables is not None:
                return template, variables
        return None

    async def readable(
        self,
        ctx: Any,
        uri: str,
        request: McpRequest | None = None,
        kept: KeptRequests | None = None,
    ) -> bool:
        """``ResourceGate.readable``: whether the caller of ``ctx`` would find ``uri`` as a
        read would, its hooks run now with that caller (a failing hook refuses)."""
        self._follow()
        static = self.catalog.resources.get(uri)
        found = self.find_template(uri)
        for resource in (static, None if found is None else found[0]):
            if resource is None:
                continue
            if not resource.hooks.any:
                return True
            known = None if kept is None else kept.get(uri)
            if known is not None and known[0] is resource:
                for_uri = known[1]
            else:
                variables = found[1] if found is not None and resource is found[0] else {}
                for_uri = (
                    self.request(ctx, uri=uri, uri_variables=variables)
                    if request is None
                    else replace(request, uri=uri, uri_variables=freeze(variables))
                )
                if kept is not None:
                    kept[uri] = (resource, for_uri)
            try:
                if resource.sync_hooks:  # with every other listener's, in one thread hop
                    check = (
                        functools.partial(self._verdict, resource, ctx, for_uri)
                        if resource.scoped_hooks
                        else functools.partial(verdict, resource, None, for_uri)
                    )
                    registered, authorized = await self._together.run(check)
                elif resource.scoped_hooks:
                    async with self.scope(ctx, for_uri) as scope:
                        registered, authorized = await self.visible(resource, scope, for_uri)
                else:  # hooks taking no service: no scope to open and close per listener
                    registered, authorized = await self.visible(resource, None, for_uri)
            except Exception as exc:  # noqa: BLE001 - a failing hook shows nothing
                self._incident("resource visibility", uri, exc)
                return False
            if registered:
                return authorized
        return False

    def _verdict(
        self, resource: CompiledResource, ctx: Any, request: McpRequest
    ) -> tuple[bool, bool]:
        """On a worker thread: ``resource``'s sync hooks for ``request``, in a scope opened
        and closed there, as a listing's (``Visibility._filter``)."""
        with self.scope(ctx, request) as scope:
            return verdict(resource, scope, request)

    async def read_resource(
        self,
        ctx: Any,
        params: types.ReadResourceRequestParams,
        tracing: Tracing | None = None,
        observed: bool = False,
        given: Given | None = None,
    ) -> stage.ResourceAnswer:
        uri = str(params.uri)
        otel = self._otel
        if otel is not None and not observed and (otel.on or (next(otel.due) and otel.refresh())):
            return await telemetry.observed(
                telemetry.RESOURCE,
                uri,
                ctx,
                self.read_resource,
                params,
                known=False,
                details=self._details,
            )
        self._follow()
        if self._staged and given is None:
            return await self._request_stage(
                ctx,
                RequestCall(uri, {}, "resources/read", component=self.known_as(uri)),
                functools.partial(self.read_resource, ctx, params, tracing, True),
                stage.RESOURCE,
                uri=uri,
            )
        place = None if self.calls is None else self.calls.admit(ctx, self.caller)
        try:
            static = self.catalog.resources.get(uri)
            if static is not None:
                result = await self._read(ctx, uri, static, {}, tracing, given, place)
                if result is not None:
                    return result
                # Hidden is absent: answer what the server would without the static resource.
            found = self.find_template(uri)
            result = (
                await self._read(ctx, uri, *found, tracing, given, place)
                if found is not None
                else None
            )
            if result is None:
                raise resource_not_found(uri, modern=is_modern(ctx))
            return result
        finally:
            if place is not None:
                place.release()

    async def _read(
        self,
        ctx: Any,
        uri: str,
        resource: CompiledResource,
        variables: dict[str, Any],
        tracing: Tracing | None = None,
        given: Given | None = None,
        place: Place | None = None,
    ) -> types.ReadResourceResult | types.InputRequiredResult | None:
        """Read ``resource`` in a scope of its own; ``None`` when it is hidden from this caller."""
        request = (
            self.request(ctx, given, uri=uri, uri_variables=variables)
            if resource.needs_request
            else None
        )

        async def read(
            request: McpRequest | None, retry: Retry | None, run: Mode
        ) -> types.ReadResourceResult | types.InputRequiredResult | Asked | None:
            try:
                async with run.scope(ctx, request) as scope:
                    if resource.hooks.any:
                        registered, authorized = await run.visible(resource, scope, request)
                        if not registered:
                            return None
                        if not authorized:
                            raise forbidden("resource", resource.name)
                    converters = resource.converters
                    arguments = run.check(self._convert, converters, variables, "URI variable")
                    inputs: Resolution | None = None
                    resolved: dict[str, Any] | None = None
                    if resource.inputs:  # the input phase: only for one that takes resolved values
                        found = await self._input_phase(
                            run, "resource", resource, ctx, scope, request, None, arguments, retry
                        )
                        if not isinstance(found, tuple):
                            return found
                        inputs, instance = found
                        resolved = inputs.values(resource.handler.resolved)
                    else:
                        instance = await run.aresolve(resource.instance, scope)
                    if resource.middleware:
                        call = Call(
                            uri,
                            MappingProxyType(arguments),
                            "resources/read",
                            component=resource.uri_template_text or resource.uri,
                        )
                        outcome = await self._named_chain(
                            run, resource, call, instance, scope, request, inputs
                        )
                    else:
                        if resolved:
                            arguments = {**arguments, **resolved}
                        outcome = await run.call(
                            resource.handler,
                            instance,
                            scope,
                            request,
                            None,
                            arguments,
                            self.threads,
                        )
                    question = asking(outcome)
                    if question is not None:
                        return handler_asked(
                            question, ctx, request or self.request(ctx), inputs, retry
                        )
                    contents = run.resource_contents(
                        outcome,
                        owner=resource.cls.__qualname__,
                        uri=uri,
                        mime_type=resource.mime_type,
                    )
                    if resource.cache is None and not resource.hooks.any:
                        return contents
                    server = self.catalog.cache_hints.get("resources/read")
                    return hinted(contents, combined((resource,), server))
            except NotFound:
                return None  # absent, exactly as when hidden
            except Forbidden:
                raise forbidden("resource", resource.name) from None

        def failed(incident: str) -> types.ReadResourceResult | None:
            raise IncidentError("Resource read failed", incident)

        def one(
            request: McpRequest | None, retry: Retry | None
        ) -> Awaitable[types.ReadResourceResult | types.InputRequiredResult | Asked | None]:
            return self._mode(resource, functools.partial(read, request, retry), tracing, place)()

        rounds = functools.partial(self._rounds, ctx, uri, request, one)
        return await self._guarded("resource", uri, rounds, failed, resource.timeout)
