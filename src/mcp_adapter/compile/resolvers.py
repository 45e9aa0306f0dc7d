"""Planning resolvers (``Annotated[T, Resolve(fn)]``) as handlers are planned.

A resolver's parameters are classified by the same code as a handler's
(``compile.handlers``): services, ``McpRequest``, the payload, named arguments, and
other resolvers. One :class:`Resolvers` serves one component: a resolver that several
parameters name is planned once and keeps one wire key (the name of the first
parameter planned that names it, ``#n`` after it when another resolver of the
component has that name already, so a client never sees the server's module paths);
a cycle is a problem with its path.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from collections.abc import Callable, Collection, Hashable
from typing import Annotated, Any

from mcp.server.elicitation import (
    AcceptedElicitation,
    AcceptedUrlElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    render_elicitation_schema,
)
from mcp.server.mcpserver.resolve import Elicit, Resolve
from pydantic import BaseModel

from container import Container, Param, Problem, type_hints
from mcp_adapter.compile.handlers import plan_function, reroot
from mcp_adapter.compiled.handlers import Slot, Source
from mcp_adapter.compiled.resolvers import ResolverPlan
from mcp_adapter.errors import problem
from mcp_adapter.input.questions import KINDS, NOTHING

_OUTCOMES = (AcceptedElicitation, DeclinedElicitation, CancelledElicitation, AcceptedUrlElicitation)


def marker_of(param: Param) -> Resolve | None:
    """The ``Resolve`` of a parameter ``Annotated[T, Resolve(fn)]``, if it is one."""
    for item in param.metadata:
        if isinstance(item, Resolve):
            return item
    return None


def wants_whole(key: Any) -> bool:
    """Whether ``T`` of ``Annotated[T, Resolve(fn)]`` is an outcome (``ElicitationResult[M]``,
    ``UrlElicitationResult``, a union of their members, one member), not the value."""
    value = getattr(key, "__value__", None) or getattr(typing.get_origin(key), "__value__", None)
    if value is not None:
        key = value
    members = typing.get_args(key) if _is_union(key) else (key,)
    for member in members:
        base = typing.get_origin(member) or member
        if isinstance(base, type) and issubclass(base, _OUTCOMES):
            return True
    return False


def _is_union(key: Any) -> bool:
    return isinstance(key, types.UnionType) or typing.get_origin(key) is typing.Union


def _identity(fn: Callable[..., Any]) -> Hashable:
    """A bound method is made anew on each access: key it by its function and its object."""
    owner = getattr(fn, "__self__", None)
    if owner is not None:
        func = getattr(fn, "__func__", None)
        return (id(func) if func is not None else getattr(fn, "__name__", id(fn)), id(owner))
    return id(fn)


def _code_name(fn: Callable[..., Any]) -> str:
    """``module:qualname``: where the resolver is, for the server's own traces."""
    qualname = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    module = getattr(fn, "__module__", None) or type(fn).__module__
    return f"{module}:{qualname}"


def _label(fn: Callable[..., Any]) -> str:
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return str(name).rpartition("<locals>.")[2]


class Resolvers:
    """The resolvers of one component, planned once each (``compile.handlers`` asks)."""

    def __init__(
        self,
        container: Container,
        *,
        payload_type: Any = None,
        argument_names: Collection[str] = (),
        _shared: tuple[dict[Hashable, ResolverPlan | None], dict[str, int]] | None = None,
        _stack: tuple[tuple[Hashable, str], ...] = (),
    ) -> None:
        self.container = container
        self.payload_type = payload_type
        self.argument_names = argument_names
        self._plans, self._bases = _shared if _shared is not None else ({}, {})
        self._stack = _stack

    def slot(self, param: Param, here: tuple[str, ...]) -> tuple[Slot | None, list[Problem]]:
        marker = marker_of(param)
        assert marker is not None
        fn = marker.fn
        identity = _identity(fn)
        if any(seen == identity for seen, _ in self._stack):
            cycle = " -> ".join([*(label for _, label in self._stack), _label(fn)])
            return None, [
                problem(
                    here,
                    f"resolver {_label(fn)} depends on itself ({cycle})",
                    "a resolver cannot take its own outcome; split the question",
                )
            ]
        if identity in self._plans:
            resolver = self._plans[identity]
            if resolver is None:
                return None, []  # its problems are reported once, where it was first planned
        else:
            resolver, problems = self._plan(fn, identity, param.name)
            if problems:
                return None, [reroot(p, here) for p in problems]
            assert resolver is not None
        whole = wants_whole(param.key)
        return Slot(param.name, Source.RESOLVED, param.key, resolver=resolver, whole=whole), []

    def _plan(
        self, fn: Callable[..., Any], identity: Hashable, name: str
    ) -> tuple[ResolverPlan | None, list[Problem]]:
        label = _label(fn)
        self._plans[identity] = None
        inner = Resolvers(
            self.container,
            payload_type=self.payload_type,
            argument_names=self.argument_names,
            _shared=(self._plans, self._bases),
            _stack=(*self._stack, (identity, label)),
        )
        plan, problems = plan_function(
            fn,
            self.container,
            label=label,
            payload_type=self.payload_type,
            argument_names=self.argument_names,
            resolvers=inner,
        )
        asks, found = _asks(fn, label)
        problems.extend(found)
        if problems or plan is None:
            return None, problems
        seen = self._bases.get(name, 0)
        self._bases[name] = seen + 1
        key = name if seen == 0 else f"{name}#{seen}"
        resolver = ResolverPlan(
            key=key,
            label=label,
            plan=dataclasses.replace(plan, resolver=_code_name(fn)),
            asks=asks,
            needs=plan.resolved,
        )
        self._plans[identity] = resolver
        return resolver, []


def _unfit_form(arm: Any, label: str) -> Problem | None:
    """A problem when the model of ``Elicit[Model]`` cannot be a form (nested models,
    lists without an enum, ...): the SDK would refuse to render it on the first call."""
    (model,) = typing.get_args(arm) or (None,)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return None
    try:
        render_elicitation_schema(model)
    except TypeError as exc:
        return problem(
            (label,),
            f"resolver {label} asks for {model.__name__}, which cannot be an elicitation "
            f"form: {exc}",
            "a form is flat: strings, numbers, booleans, enums and lists of enum values",
        )
    return None


def _asks(fn: Callable[..., Any], label: str) -> tuple[str | None, list[Problem]]:
    """The kind of question ``fn``'s return annotation declares (``NOTHING`` for a plain
    value, ``None`` when it declares nothing it could be checked by); several is a problem."""
    target = fn if inspect.isroutine(fn) else type(fn).__call__
    returned = type_hints(target, strict=False).get("return", Any)
    if typing.get_origin(returned) is Annotated:
        returned = typing.get_args(returned)[0]
    if returned is Any:
        return None, []
    kinds: list[str] = []
    for arm in typing.get_args(returned) if _is_union(returned) else (returned,):
        base = typing.get_origin(arm) or arm
        if base is Any:
            return None, []
        if base is Elicit or (isinstance(base, type) and base in KINDS):
            kinds.append(KINDS[base])
        if base is Elicit:
            unfit = _unfit_form(arm, label)
            if unfit is not None:
                return None, [unfit]
    if len(kinds) > 1:
        return None, [
            problem(
                (label,),
                f"resolver {label} returns {' or '.join(kinds)}: a resolver asks one question",
                "split it into one resolver per question (each may take the other's outcome)",
            )
        ]
    return (kinds[0] if kinds else NOTHING), []
