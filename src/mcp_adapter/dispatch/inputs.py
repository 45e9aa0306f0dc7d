"""The input phase of one call, in its round's scope: a component's resolvers run, what
they ask is asked, and their values reach the handler.

Where it runs (``dispatch.modes``) decides how a 2025-11-25 question is asked: a call on
the loop asks at once and goes on (nothing before the answer runs again); a call that
holds a worker thread (a thread-bound component) ends its round first, so no thread
waits for the client, and its next round re-runs what comes before the answers, as a
2026-07-28 retry does. 2026-07-28 answers with an ``input_required`` result.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from mcp import MCPError, types

from container import Scope
from mcp_adapter.compiled.catalog import Catalog, CompiledComponent
from mcp_adapter.compiled.handlers import HandlerPlan, Offload
from mcp_adapter.declare.request import McpRequest
from mcp_adapter.declare.response import McpResponse
from mcp_adapter.dispatch.chain import Injector
from mcp_adapter.dispatch.modes import Mode
from mcp_adapter.dispatch.snapshot import is_modern, supports_elicitation
from mcp_adapter.dispatch.threads import Threads
from mcp_adapter.errors import forbidden
from mcp_adapter.input.asking import (
    Asked,
    answered,
    input_required,
    missing_elicitation,
    no_back_channel,
    send,
)
from mcp_adapter.input.resolution import (
    FIRST,
    MAX_INPUT_ROUNDS,
    Asker,
    Resolution,
    Retry,
    next_round,
)
from mcp_adapter.input.state import retried_progress


async def resolve_inputs(
    run: Any,
    component: CompiledComponent,
    ctx: Any,
    scope: Any,
    request: McpRequest,
    payload: Any,
    named: Mapping[str, Any] | None,
    retry: Retry | None,
    threads: Offload,
    timeout: float,
    roots: Sequence[tuple[str, Any]] | None = None,
) -> Resolution | types.InputRequiredResult | Asked:
    """The handler's resolved values (a ``Resolution``), or the round's questions: an
    ``input_required`` result (2026-07-28) or an ``Asked`` for the next round
    (2025-11-25, a call that may not wait here). ``roots``: the resolved parameters to
    resolve, by default all the component takes."""
    modern = is_modern(ctx)
    if retry is None:
        retry = retried_progress(request.params) if modern else FIRST
    waits_here = not modern and not (component.thread_bound or component.borrows)
    reachable = modern or ctx.session.can_send_request
    sender = functools.partial(send, ctx) if waits_here and reachable else None
    asker = Asker(request.client_capabilities, retry, sender, timeout, reachable=reachable)
    arguments = named or {}

    async def invoke(resolver: Any, given: dict[str, Any]) -> Any:
        plan = resolver.plan
        kwargs = {name: arguments[name] for name in plan.arguments if name in arguments}
        kwargs.update(given)
        return await run.call(plan, None, scope, request, payload, kwargs, threads)

    resolution = Resolution(invoke, asker)
    if await resolution.run(component.input_roots if roots is None else roots):
        return resolution
    progress = next_round(retry, asker)
    if modern:
        return input_required(None, progress, asker.pending)
    return Asked(None, request, dict(asker.pending), progress)


def handler_asked(
    question: McpResponse,
    ctx: Any,
    request: McpRequest,
    inputs: Resolution | None,
    retry: Retry | None = None,
) -> types.InputRequiredResult | Asked:
    """The question a handler returned (``McpResponse.elicit``; see ``input.asking.asking``),
    as this era asks it: an ``input_required`` result, or an ``Asked`` for the loop once
    the round has closed its scope (2025-11-25). The resolvers' answers so far travel
    with it, so they are not asked again, and the rounds so far (``retry``'s, else the
    retried state's), so the round limit holds for a handler asking again and again."""
    modern = is_modern(ctx)
    if not modern and not ctx.session.can_send_request:
        raise no_back_channel()
    if not supports_elicitation(request):
        raise missing_elicitation()
    if inputs is not None:
        progress = next_round(inputs.asker.retry, inputs.asker)
    else:
        progress = next_round(retry or (retried_progress(request.params) if modern else FIRST))
    if modern:
        return input_required(question, progress)
    return Asked(question, request, progress=progress)


async def allowed_with_answers(
    run: Any,
    component: CompiledComponent,
    instance: Any,
    scope: Any,
    request: McpRequest,
    inputs: Resolution,
    threads: Offload,
) -> bool:
    """Whether every ``authorize`` that takes resolved parameters allows the call, asked
    with the answers (after the input phase, before any middleware and the handler)."""
    for plan in component.hooks.answered:
        answers = inputs.values(plan.resolved)
        if not await run.call(plan, instance, scope, request, None, answers, threads):
            return False
    return True


def injecting(inject: Injector, inputs: Resolution) -> Injector:
    """What a call-stage layer is given: its injected arguments, and the answers of its
    resolved parameters (the call's input phase had them)."""

    async def with_answers(plan: HandlerPlan, scope: Any, request: McpRequest | None) -> Any:
        kwargs = await inject(plan, scope, request)
        if plan.resolved:
            kwargs = {**kwargs, **inputs.values(plan.resolved)}
        return kwargs

    return with_answers


class InputPhase:
    """Part of the dispatcher (``core.DispatchCore``): the input phase of a call, and the
    rounds of a 2025-11-25 resource read or prompt that asks."""

    catalog: Catalog
    threads: Threads

    async def _input_phase(
        self,
        run: Mode,
        kind: str,
        component: CompiledComponent,
        ctx: Any,
        scope: Scope,
        request: McpRequest | None,
        payload: Any,
        named: Mapping[str, Any] | None,
        retry: Retry | None,
        roots: Sequence[tuple[str, Any]] | None = None,
    ) -> tuple[Resolution, Any] | types.InputRequiredResult | Asked:
        """The input phase of a call whose component takes resolved values
        (``component.inputs``): its resolvers run and what they ask is asked
        (``resolve_inputs``); once every answer is in, the component is built and each
        ``authorize`` that takes answers is asked with them (a refusal is ``forbidden``).
        ``(answers, instance)``, or this round's questions; ``roots``: only these resolved
        parameters (a task tool's ``authorize``, before its task starts)."""
        assert request is not None  # a component with resolvers needs the request
        threads = self.threads
        timeout = self.catalog.input_timeout
        found = await resolve_inputs(
            run, component, ctx, scope, request, payload, named, retry, threads, timeout, roots
        )
        if not isinstance(found, Resolution):
            return found
        instance = await run.aresolve(component.instance, scope)
        if component.hooks.answered and not await allowed_with_answers(
            run, component, instance, scope, request, found, threads
        ):
            raise forbidden(kind, component.name)
        return found, instance

    async def _rounds(
        self,
        ctx: Any,
        what: str,
        request: McpRequest | None,
        one: Callable[[McpRequest | None, Retry | None], Awaitable[Any]],
    ) -> Any:
        """A resource read or a prompt, round after round while it asks a 2025-11-25 client
        (each round in a scope of its own; the question goes out between them, here)."""
        outcome = await one(request, None)
        rounds = 1
        while isinstance(outcome, Asked):
            if rounds > MAX_INPUT_ROUNDS:  # next_round ends the call first, with its tool error
                raise RuntimeError(f"{what} asked for input {MAX_INPUT_ROUNDS} times")
            try:
                request, retry = await self.answered(ctx, outcome)
            except TimeoutError:
                seconds = self.catalog.input_timeout
                raise MCPError(
                    types.INTERNAL_ERROR,
                    f"The client did not answer the request for input within {seconds:g} s",
                ) from None
            outcome = await one(request, retry)
            rounds += 1
        return outcome

    async def answered(self, ctx: Any, asked: Asked) -> tuple[McpRequest, Retry]:
        """2025-11-25: ask the client what a round asked (``input.asking.answered``), each
        question within ``Server.input_timeout``."""
        return await answered(ctx, asked, self.catalog.input_timeout)
