"""``prompts/list``, ``prompts/get`` and ``completion/complete``."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Mapping
from types import MappingProxyType
from typing import Any, cast

from mcp import MCPError, types

from mcp_adapter.compiled.catalog import (
    CompiledPrompt,
    CompiledResource,
)
from mcp_adapter.declare.middleware import Call, RequestCall
from mcp_adapter.declare.request import McpRequest
from mcp_adapter.dispatch import stage, telemetry
from mcp_adapter.dispatch.cache_hints import hinted
from mcp_adapter.dispatch.chain import through
from mcp_adapter.dispatch.core import DispatchCore, Given, Mode
from mcp_adapter.dispatch.inputs import handler_asked
from mcp_adapter.dispatch.telemetry import Tracing
from mcp_adapter.errors import (
    IncidentError,
    unknown,
)
from mcp_adapter.input.asking import Asked, asking
from mcp_adapter.input.resolution import Resolution, Retry

MAX_COMPLETIONS = 100


class PromptCalls(DispatchCore):
    """Serving prompts, and completion of prompt arguments and URI variables."""

    # -- prompts ----------------------------------------------------------------------

    async def list_prompts(
        self, ctx: Any, params: types.PaginatedRequestParams | None, given: Given | None = None
    ) -> types.ListPromptsResult:
        return await self._listing(
            ctx, "prompts/list", params, given, self.list_prompts, self._prompts
        )

    async def _prompts(
        self, ctx: Any, given: Given | None, cursor: str | None
    ) -> types.ListPromptsResult:
        listed, index, after = await self._visible_page(ctx, given, cursor, self._prompt_pages)
        result = types.ListPromptsResult(prompts=listed, next_cursor=after)
        return hinted(result, self._prompt_hints[index])

    async def get_prompt(
        self,
        ctx: Any,
        params: types.GetPromptRequestParams,
        tracing: Tracing | None = None,
        observed: bool = False,
        provided: Given | None = None,
    ) -> stage.PromptAnswer:
        otel = self._otel
        if otel is not None and not observed and (otel.on or (next(otel.due) and otel.refresh())):
            known = params.name in self.catalog.prompts
            return await telemetry.observed(
                telemetry.PROMPT,
                params.name,
                ctx,
                self.get_prompt,
                params,
                known=known,
                details=self._details,
            )
        self._follow()
        prompt = self.catalog.prompts.get(params.name)
        if self._staged and provided is None:
            return await self._request_stage(
                ctx,
                RequestCall(
                    params.name,
                    params.arguments or {},
                    "prompts/get",
                    component=prompt.name if prompt else None,
                ),
                functools.partial(self.get_prompt, ctx, params, tracing, True),
                stage.PROMPT,
                arguments=params.arguments or {},
            )
        if prompt is None:
            raise unknown("prompt", params.name)
        given = dict(params.arguments or {})
        request = self.request(ctx, provided, arguments=given) if prompt.needs_request else None
        place = None if self.calls is None else self.calls.admit(ctx, self.caller)

        async def get(
            request: McpRequest | None, retry: Retry | None, run: Mode
        ) -> types.GetPromptResult | types.InputRequiredResult | Asked:
            async with run.scope(ctx, request) as scope:
                if prompt.hooks.any:
                    await self._gate(run.visible, "prompt", prompt, scope, request)
                arguments = run.check(_prompt_arguments, prompt, given)
                inputs: Resolution | None = None
                resolved: dict[str, Any] | None = None
                if prompt.inputs:  # the input phase: only for a prompt that takes resolved values
                    found = await self._input_phase(
                        run, "prompt", prompt, ctx, scope, request, None, arguments, retry
                    )
                    if not isinstance(found, tuple):
                        return found
                    inputs, instance = found
                    resolved = inputs.values(prompt.handler.resolved)
                else:
                    instance = await run.aresolve(prompt.instance, scope)
                if prompt.middleware:
                    call = Call(prompt.name, MappingProxyType(arguments), "prompts/get")
                    outcome = await self._named_chain(
                        run, prompt, call, instance, scope, request, inputs
                    )
                else:
                    if resolved:
                        arguments.update(resolved)
                    outcome = await run.call(
                        prompt.handler, instance, scope, request, None, arguments, self.threads
                    )
                question = asking(outcome)
                if question is not None:
                    return handler_asked(question, ctx, request or self.request(ctx), inputs, retry)
                return run.prompt_messages(
                    outcome, owner=prompt.cls.__qualname__, description=prompt.entry.description
                )

        def one(
            request: McpRequest | None, retry: Retry | None
        ) -> Awaitable[types.GetPromptResult | types.InputRequiredResult | Asked]:
            return self._mode(prompt, functools.partial(get, request, retry), tracing, place)()

        def failed(incident: str) -> types.GetPromptResult:
            raise IncidentError("Prompt failed", incident)

        try:
            return await self._guarded(
                "prompt",
                prompt.name,
                functools.partial(self._rounds, ctx, prompt.name, request, one),
                failed,
                prompt.timeout,
            )
        finally:
            if place is not None:
                place.release()

    # -- completion ---------------------------------------------------------------------

    def _completion_target(
        self, ref: types.PromptReference | types.ResourceTemplateReference
    ) -> CompiledPrompt | CompiledResource | None:
        if isinstance(ref, types.PromptReference):
            return self.catalog.prompts.get(ref.name)
        for template in self.catalog.templates:
            if template.uri_template_text == ref.uri:
                return template
        return None

    async def complete(
        self, ctx: Any, params: types.CompleteRequestParams, given: Given | None = None
    ) -> types.CompleteResult:
        self._follow()
        target = self._completion_target(params.ref)
        if self._staged and given is None:
            ref = params.ref
            asked = ref.name if isinstance(ref, types.PromptReference) else ref.uri
            known = target.name if target is not None else None
            arguments = {"argument": params.argument.name, "value": params.argument.value}
            return await self._request_stage(
                ctx,
                RequestCall(asked, arguments, "completion/complete", component=known),
                functools.partial(self.complete, ctx, params),
                stage.COMPLETION,
            )
        empty = types.CompleteResult(completion=types.Completion(values=[]))
        if target is None or target.completion is None:
            return empty
        plan = target.completion
        layers = self.catalog.middleware
        needed = plan.needs_request or target.needs_request or bool(layers)
        request = self.request(ctx, given) if needed else None
        context = dict(params.context.arguments or {}) if params.context else {}
        given = MappingProxyType(
            {"argument": params.argument.name, "value": params.argument.value, "context": context}
        )

        async def run() -> types.CompleteResult:
            async with self.scope(ctx, request) as scope:
                if not all(await self.visible(target, scope, request)):
                    return empty
                instance = await target.instance(scope)

                async def values_of(call: Call) -> types.CompleteResult:
                    picked = {name: call.arguments[name] for name in plan.arguments}
                    found = await plan.invoke(instance, scope, request, None, picked, self.threads)
                    values = [str(v) for v in found]
                    return types.CompleteResult(
                        completion=types.Completion(
                            values=values[:MAX_COMPLETIONS],
                            total=len(values),
                            has_more=len(values) > MAX_COMPLETIONS,
                        )
                    )

                call = Call(target.name, given, "completion/complete")
                if not layers:
                    return await values_of(call)
                completed = await through(layers, call, values_of, scope, request)
                return cast(types.CompleteResult, completed)

        def failed(incident: str) -> types.CompleteResult:
            raise IncidentError("Completion failed", incident)

        place = None if self.calls is None else self.calls.admit(ctx, self.caller)
        try:
            return await self._guarded("completion", target.name, run, failed, target.timeout)
        finally:
            if place is not None:
                place.release()


def _prompt_arguments(prompt: CompiledPrompt, given: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of a prompt call, checked against its declared ones and converted."""
    declared = {argument.name for argument in prompt.arguments}
    extra = sorted(set(given) - declared)
    if extra:
        raise MCPError(types.INVALID_PARAMS, f"Unknown prompt argument(s): {', '.join(extra)}")
    missing = [a.name for a in prompt.arguments if a.required and a.name not in given]
    if missing:
        raise MCPError(
            types.INVALID_PARAMS, f"Missing required prompt argument(s): {', '.join(missing)}"
        )
    return DispatchCore._convert(prompt.converters, given, "prompt argument")
