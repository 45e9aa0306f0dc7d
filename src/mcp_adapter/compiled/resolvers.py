"""Resolvers, compiled: how to call each, what it depends on, what it may ask.

A parameter ``Annotated[T, Resolve(fn)]`` of a handler, a hook, a call-stage layer or
another resolver is a ``Slot`` of source ``RESOLVED`` whose ``resolver`` is ``fn``'s
:class:`ResolverPlan`. The plans of one component form a DAG (cycles are refused at
compile time); the component keeps their union, dependencies first
(:func:`in_order`), so the input phase (``input.resolution``) walks it without
looking anything up, and a component that asks nothing pays nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from mcp_adapter.compiled.handlers import HandlerPlan


@dataclass(frozen=True, slots=True, eq=False)
class ResolverPlan:
    """One resolver: its wire key, its own parameter plan, the resolvers it takes."""

    key: str
    """Its key on the wire (``inputRequests``, ``tasks/update``, the recorded outcomes),
    stable across processes and rounds: the name of the parameter it fills (``#n``
    after it when two resolvers of one component would share it); never the
    server's module paths."""
    label: str
    plan: HandlerPlan = field(repr=False)
    """Its parameters from services, the request, the payload and named arguments;
    its resolved parameters are given by the phase."""
    asks: str | None = None
    """The kind of question its return annotation declares (``input.questions.KINDS``;
    ``NOTHING`` for a plain value), ``None`` when it declares none (it may return any
    marker): what ``mcp-adapter check`` lists."""
    needs: tuple[tuple[str, ResolverPlan, bool], ...] = field(default=(), repr=False)
    """``(parameter, resolver, whole outcome)`` for each of its resolved parameters."""


def in_order(plans: Iterable[HandlerPlan]) -> tuple[ResolverPlan, ...]:
    """Every resolver the ``plans`` need, each once, dependencies first."""
    seen: dict[str, ResolverPlan] = {}

    def visit(resolver: ResolverPlan) -> None:
        if resolver.key in seen:
            return
        for _, dependency, _whole in resolver.needs:
            visit(dependency)
        seen[resolver.key] = resolver

    for plan in plans:
        for _, resolver, _whole in plan.resolved:
            visit(resolver)
    return tuple(seen.values())
