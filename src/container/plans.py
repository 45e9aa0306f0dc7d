"""Call plans: which parameters of a callable the container fills, decided once."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from container.codegen import AsyncBuilder, Builder
from container.errors import Problem, ResolutionError
from container.graph import Graph
from container.introspect import EMPTY, parameters, type_name

KEYWORD_ONLY = 1 << 30
"""The position of a keyword-only parameter: no count of positional arguments reaches it."""


@dataclass(frozen=True, slots=True)
class CallPlan:
    """Which parameters of a callable the container fills, decided once.

    ``params`` holds ``(name, index, sync_builder, async_builder)`` for
    parameters passed by keyword: ``index`` is the parameter's position (a
    huge number for keyword-only ones), so a caller who passes that many
    positional arguments, or the name as a keyword, fills it instead.
    ``positional`` holds ``(index, sync_builder, async_builder, default)``
    for positional-only parameters, which must be passed in order: one the
    container cannot build is passed its default. ``unresolved`` lists
    parameters the container cannot fill and that have no default, with the
    reasons; calling without giving them raises ``ResolutionError``.
    """

    params: tuple[tuple[str, int, Builder, AsyncBuilder | None], ...]
    positional: tuple[tuple[int, Builder | None, AsyncBuilder | None, Any], ...] = ()
    unresolved: tuple[tuple[str, int, tuple[Problem, ...]], ...] = ()
    owner: str = ""

    def _check_unresolved(self, given_positional: int, given: Mapping[str, Any]) -> None:
        problems: list[Problem] = []
        for name, index, reasons in self.unresolved:
            if name not in given and index >= given_positional:
                problems.extend(reasons)
        if problems:
            raise ResolutionError(problems, title=f"Cannot call {self.owner}")

    def resolve_sync(
        self, ctx: Any, given_positional: int, given: Mapping[str, Any]
    ) -> tuple[list[Any], dict[str, Any]]:
        """The positional arguments to append to the caller's and the keywords to add."""
        if self.unresolved:
            self._check_unresolved(given_positional, given)
        extra = [
            default if build is None else build(ctx)
            for index, build, _, default in self.positional
            if index >= given_positional
        ]
        return extra, {
            name: build(ctx)
            for name, index, build, _ in self.params
            if index >= given_positional and name not in given
        }

    async def resolve_async(
        self, ctx: Any, given_positional: int, given: Mapping[str, Any]
    ) -> tuple[list[Any], dict[str, Any]]:
        if self.unresolved:
            self._check_unresolved(given_positional, given)
        extra: list[Any] = []
        for index, build, abuild, default in self.positional:
            if index < given_positional:
                continue
            if abuild is not None:
                extra.append(await abuild(ctx))
            else:
                extra.append(default if build is None else build(ctx))
        values: dict[str, Any] = {}
        for name, index, build, abuild in self.params:
            if index < given_positional or name in given:
                continue
            values[name] = await abuild(ctx) if abuild is not None else build(ctx)
        return extra, values


def plan_call(
    fn: Callable[..., Any],
    graph: Graph,
    compile_sync: Callable[[Any], Builder],
    compile_async: Callable[[Any], AsyncBuilder],
) -> CallPlan:
    """The plan for calling ``fn``: a builder for each parameter ``graph`` can resolve."""
    name = type_name(fn)
    params: list[tuple[str, int, Builder, AsyncBuilder | None]] = []
    positional: list[tuple[int, Builder | None, AsyncBuilder | None, Any]] = []
    unresolved: list[tuple[str, int, tuple[Problem, ...]]] = []
    for index, param in enumerate(parameters(fn)):
        if param.variadic:
            continue
        position = KEYWORD_ONLY if param.kind is inspect.Parameter.KEYWORD_ONLY else index
        positional_only = param.kind is inspect.Parameter.POSITIONAL_ONLY
        if param.key is EMPTY or not graph.resolvable(param.key):
            if param.has_default or param.optional:
                if positional_only:
                    default = param.default if param.has_default else None
                    positional.append((index, None, None, default))
                continue
            _, problems = graph.dependencies([param], (name,), owner=fn)
            unresolved.append((param.name, position, tuple(problems)))
            if positional_only:
                positional.append((index, None, None, None))
            continue
        sync_builder = compile_sync(param.key)
        is_async = graph.node(param.key).is_async
        async_builder = compile_async(param.key) if is_async else None
        if positional_only:
            positional.append((index, sync_builder, async_builder, None))
        else:
            params.append((param.name, position, sync_builder, async_builder))
    return CallPlan(tuple(params), tuple(positional), tuple(unresolved), name)
