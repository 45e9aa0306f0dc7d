"""What compiling any component needs, whatever declared it: its name, description,
constructor, visibility hooks, contracts and middleware, and the named arguments and
completion of resources and prompts.

A component declared by a class (``Tool``, ``Resource``, ``Prompt``) has its hooks
and constructor on the class; one declared by a function (``@tool``, ``ToolSpec``)
has callables instead. Both are planned by ``handlers`` into the same ``Hooks``.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from mcp.server.caching import CacheHint

from container import EMPTY, Container, Lifetime, Problem, ProviderKind
from mcp_adapter.compile.handlers import (
    NO_RESOLVERS_HERE,
    Resolving,
    plan_function,
    plan_handler,
)
from mcp_adapter.compile.middleware import is_async_callable, plan_layers
from mcp_adapter.compile.resolvers import Resolvers
from mcp_adapter.compiled import context as context_values
from mcp_adapter.compiled.catalog import Hooks
from mcp_adapter.compiled.handlers import HandlerPlan, Layer, Source
from mcp_adapter.declare.naming import default_name, valid_name
from mcp_adapter.declare.policy import Policy
from mcp_adapter.errors import problem
from schemas import Contract, ContractError

SHOULD_REGISTER = "shouldRegister"
AUTHORIZE = "authorize"
FUNCTION_HOOKS = ("should_register", "authorize")
"""The ``ToolSpec`` fields holding visibility hooks, in the order they are asked."""


def description_of(cls: type, explicit: str | None) -> str | None:
    if explicit:
        return explicit
    doc = cls.__dict__.get("__doc__")
    return inspect.cleandoc(doc) if doc else None


def declared_name(cls: type, suffix: str) -> Any:
    """The name a component class declares (``name`` in its own body), else its default."""
    explicit = cls.__dict__.get("name")
    return explicit if explicit is not None else default_name(cls.__name__, suffix)


def checked_name(name: Any, where: str, problems: list[Problem], what: str = "name") -> str:
    if not isinstance(name, str) or not valid_name(name):
        problems.append(
            problem((where,), f"invalid {what} {name!r}", f"{what}s match [A-Za-z0-9_.-]{{1,128}}")
        )
    return str(name)


def name_of(cls: type, suffix: str, problems: list[Problem]) -> str:
    return checked_name(declared_name(cls, suffix), cls.__qualname__, problems)


def builder(cls: type, container: Container, problems: list[Problem]) -> tuple[Any, bool]:
    """``(build, is_async)`` of a component class's instance in a scope."""
    context_values.declare(container)
    node = container.node(cls)
    if not node.ok:
        problems.extend(node.problems)
        return None, False
    if node.is_async:
        return container.async_builder(cls), True
    return container.builder(cls), False


def builds_alone(cls: type, container: Container) -> bool:
    """Whether building ``cls`` needs no scope: a transient class constructed with no
    arguments, nothing to finalize (its builder is then ``cls()``, whatever it is given)."""
    node = container.node(cls)
    binding = node.binding
    return (
        node.ok
        and not node.is_async
        and not node.deps
        and binding.kind is ProviderKind.CLASS
        and binding.lifetime is Lifetime.TRANSIENT
        and binding.on_close is None
        and binding.release is None
    )


HIDDEN_NEVER_ASKS = (
    "it decides whether the component exists for this caller, and a hidden component must never ask"
)


def _one(plan: HandlerPlan | None) -> tuple[HandlerPlan, ...]:
    return () if plan is None else (plan,)


def qualname(target: Any) -> str:
    """How a problem names a callable: its qualified name, else its type's."""
    return str(getattr(target, "__qualname__", None) or type(target).__qualname__)


def checked_policies(policies: Any, where: str, problems: list[Problem]) -> tuple[Policy, ...]:
    """The ``Policy`` objects of ``policies`` (the ``policies`` of what ``where`` names);
    a problem for anything else."""
    if isinstance(policies, Policy | str) or not isinstance(policies, Sequence):
        problems.append(
            problem(
                (where,),
                f"the policies of {where} must be a sequence of Policy, not {policies!r}",
                "write policies = (signed_in,) with a trailing comma for one",
            )
        )
        return ()
    found: list[Policy] = []
    for policy in policies:
        if isinstance(policy, Policy):
            found.append(policy)
            continue
        problems.append(
            problem(
                (where,),
                f"{policy!r} in the policies of {where} is not a Policy",
                "write Policy(authorize=..., should_register=...)",
            )
        )
    return tuple(found)


def policy_hooks(policies: Any, where: str, container: Container, problems: list[Problem]) -> Hooks:
    """The rules of ``policies`` (of the component, server or extension ``where`` names),
    planned as function hooks; a problem's path starts with the policy and ``where``."""
    should_register: list[HandlerPlan] = []
    authorize: list[HandlerPlan] = []
    for policy in checked_policies(policies, where, problems):
        for hook, plans in (
            (policy.should_register, should_register),
            (policy.authorize, authorize),
        ):
            if hook is not None:
                plan = _hook_plan(hook, f"policy {policy.name!r} of {where}", container, problems)
                if plan is not None:
                    plans.append(plan)
    return Hooks(should_register=tuple(should_register), authorize=tuple(authorize))


def _hook_plan(
    hook: Callable[..., Any],
    where: str,
    container: Container,
    problems: list[Problem],
    resolvers: Resolving | None = None,
) -> HandlerPlan | None:
    why = HIDDEN_NEVER_ASKS if where.startswith("should_register") else NO_RESOLVERS_HERE
    label = qualname(hook)
    plan, found = plan_function(hook, container, label=label, why=why, resolvers=resolvers)
    problems.extend(dataclasses.replace(each, path=(where, *each.path)) for each in found)
    return None if plan is None else dataclasses.replace(plan, is_async=is_async_callable(hook))


def function_hooks(
    declared: Any,
    name: str,
    container: Container,
    problems: list[Problem],
    resolvers: Resolving | None = None,
) -> Hooks:
    """The ``policies`` and the ``should_register``/``authorize`` callables of a function
    tool, planned as a class's are; a problem's path starts with the hook and the tool."""
    plans: dict[str, HandlerPlan | None] = dict.fromkeys(FUNCTION_HOOKS)
    for which in FUNCTION_HOOKS:
        hook: Any = getattr(declared, which)
        if hook is None:
            continue
        where = f"{which} of tool {name!r}"
        if not callable(hook):
            problems.append(
                problem(
                    (where,),
                    f"the {which} hook {hook!r} of tool {name!r} is not callable",
                    "pass a function or method returning a bool",
                )
            )
            continue
        asks = resolvers if which == "authorize" else None
        plans[which] = _hook_plan(hook, where, container, problems, asks)
    own = Hooks(should_register=_one(plans["should_register"]), authorize=_one(plans["authorize"]))
    policies = getattr(declared, "policies", ())
    return own.within(policy_hooks(policies, f"tool {name!r}", container, problems))


def contract(tp: Any, where: str, what: str, problems: list[Problem]) -> Contract[Any] | None:
    try:
        return Contract.of(tp)
    except (ContractError, TypeError) as exc:
        problems.append(problem((where,), f"the {what} contract is not valid: {exc}"))
        return None


def own_layers(
    declared: Any, kind: str, name: str, container: Container, problems: list[Problem]
) -> tuple[Layer, ...]:
    """The component's own ``middleware`` (a class attribute or a spec field), compiled."""
    middleware: Sequence[Any] = tuple(getattr(declared, "middleware", None) or ())
    return plan_layers(middleware, f"{kind} {name!r}", container, problems)


def timeout_of(declared: Any, where: str, problems: list[Problem]) -> float | None:
    """The component's own ``timeout`` in seconds (``None``: the server's)."""
    value: object = getattr(declared, "timeout", None)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        problems.append(
            problem((where,), f"timeout must be a positive number of seconds, not {value!r}")
        )
        return None
    return float(value)


def cache_of(declared: Any, where: str, problems: list[Problem]) -> CacheHint | None:
    """The component's own ``cache`` (the SDK's ``CacheHint``), or ``None``."""
    value: object = getattr(declared, "cache", None)
    if value is None or isinstance(value, CacheHint):
        return value
    problems.append(
        problem(
            (where,),
            f"cache must be a CacheHint, not {value!r}",
            "declare cache = CacheHint(ttl_ms=60_000, scope='public') "
            "(from mcp.server.caching import CacheHint)",
        )
    )
    return None


@dataclasses.dataclass(frozen=True, slots=True)
class Parts:
    """What every compiled component has besides its handler: how its instance is built,
    its visibility hooks, its own middleware layers, its timeout and its cache hint."""

    build: Callable[[Any], Any] | None
    build_is_async: bool
    build_contexts: frozenset[Any]
    hooks: Hooks
    middleware: tuple[Layer, ...]
    timeout: float | None
    cache: CacheHint | None = None
    builds_alone: bool = False

    def fields(self) -> dict[str, Any]:
        """The ``CompiledComponent`` fields these parts fill."""
        return {
            "build": self.build,
            "build_is_async": self.build_is_async,
            "build_contexts": self.build_contexts,
            "builds_alone": self.builds_alone,
            "hooks": self.hooks,
            "middleware": self.middleware,
            "timeout": self.timeout,
            "cache": self.cache,
        }


def class_parts(
    cls: type,
    kind: str,
    name: str,
    container: Container,
    problems: list[Problem],
    resolvers: Resolving | None = None,
) -> Parts:
    """The parts of a component declared by a class: its ``policies``, then its
    ``shouldRegister`` and ``authorize`` methods, planned (``authorize`` may take resolved
    parameters, from ``resolvers``: its handler's), its ``middleware`` and ``timeout``
    attributes, and its constructor's plan."""
    shown, found = plan_handler(
        cls, SHOULD_REGISTER, container, optional=True, why=HIDDEN_NEVER_ASKS
    )
    problems.extend(found)
    allowed, found = plan_handler(cls, AUTHORIZE, container, optional=True, resolvers=resolvers)
    problems.extend(found)
    own = Hooks(should_register=_one(shown), authorize=_one(allowed))
    policies = getattr(cls, "policies", ())
    hooks = own.within(policy_hooks(policies, f"{kind} {name!r}", container, problems))
    layers = own_layers(cls, kind, name, container, problems)
    timeout = timeout_of(cls, f"{cls.__qualname__}.timeout", problems)
    cache = cache_of(cls, f"{cls.__qualname__}.cache", problems)
    build, build_is_async = builder(cls, container, problems)
    contexts = container.node(cls).contexts if build is not None else frozenset()
    alone = build is not None and builds_alone(cls, container)
    return Parts(build, build_is_async, contexts, hooks, layers, timeout, cache, alone)


class FunctionTool:
    """Stands for the class of a function tool whose handler belongs to none."""


def owner_of(handler: Callable[..., Any]) -> type:
    """The class a handler belongs to (a bound method's), else a named stand-in."""
    bound = getattr(handler, "__self__", None)
    if bound is not None:
        return bound if isinstance(bound, type) else type(bound)
    name = str(getattr(handler, "__qualname__", type(handler).__qualname__))
    return type(
        name,
        (FunctionTool,),
        {"__module__": getattr(handler, "__module__", __name__), "__qualname__": name},
    )


COMPLETE = "complete"


COMPLETION_ARGUMENTS = ("argument", "value", "context")


def converters(plan: HandlerPlan) -> dict[str, Contract[Any]]:
    """Contracts for named arguments annotated with something other than ``str``."""
    return {
        slot.name: Contract.of(slot.key)
        for slot in plan.slots
        if slot.source is Source.ARGUMENT and slot.key not in (EMPTY, str)
    }


def completion_plan(cls: type, container: Container, problems: list[Problem]) -> HandlerPlan | None:
    plan, found = plan_handler(
        cls, COMPLETE, container, argument_names=COMPLETION_ARGUMENTS, optional=True
    )
    problems.extend(found)
    return plan


def named_plans(
    cls: type,
    kind: str,
    name: str,
    names: Sequence[str],
    container: Container,
    problems: list[Problem],
) -> tuple[HandlerPlan | None, Parts, HandlerPlan | None]:
    """The plans of a component whose ``handle()`` takes named arguments (a prompt's
    declared arguments, a resource's URI variables): its handler's (resolved parameters
    included), its parts, and its ``complete()``'s."""
    resolvers = Resolvers(container, argument_names=names)
    handler, found = plan_handler(
        cls, "handle", container, argument_names=names, resolvers=resolvers
    )
    problems.extend(found)
    parts = class_parts(cls, kind, name, container, problems, resolvers)
    return handler, parts, completion_plan(cls, container, problems)
