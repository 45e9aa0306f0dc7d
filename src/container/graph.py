"""The dependency graph: which binding serves each key, what it needs, what is wrong."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from container.binding import Binding, ProviderKind
from container.errors import Problem, ProblemKind
from container.introspect import AnnotationError, Param, parameters, type_name
from container.lifetime import Lifetime

_NOT_AUTOWIRED_MODULES = frozenset({"builtins", "typing", "types", "collections.abc", "abc"})


@dataclass(frozen=True, slots=True)
class Dependency:
    """A parameter of a factory that the container fills."""

    name: str
    key: Any
    positional: bool


@dataclass(slots=True)
class Node:
    """A key as the container will build it.

    ``is_async`` is true when the key or anything below it needs awaiting;
    ``scoped_below`` when anything it captures lives per scope.
    """

    key: Any
    binding: Binding
    deps: tuple[Dependency, ...] = ()
    is_async: bool = False
    scoped_below: bool = False
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def autowirable(key: Any) -> bool:
    """Whether an unbound key may be built from its constructor annotations."""
    return (
        isinstance(key, type)
        and key.__module__ not in _NOT_AUTOWIRED_MODULES
        and not inspect.isabstract(key)
        and not getattr(key, "_is_protocol", False)
    )


def _hint_for_missing(key: Any) -> str:
    name = type_name(key)
    if isinstance(key, type) and (inspect.isabstract(key) or getattr(key, "_is_protocol", False)):
        return f"bind an implementation: container.scoped({name}, Impl)"
    if isinstance(key, type) and key.__module__ in _NOT_AUTOWIRED_MODULES:
        return f"{name} is a builtin type; give the parameter a default or bind a value"
    return f"bind it: container.instance({name}, value) or container.scoped({name}, factory)"


class Graph:
    """Analyses keys against a set of bindings; memoizes a ``Node`` per key."""

    def __init__(self, bindings: Mapping[Any, Binding]) -> None:
        self._bindings = bindings
        self._nodes: dict[Any, Node] = {}
        self._visiting: list[Any] = []

    def binding_for(self, key: Any) -> Binding | None:
        binding = self._bindings.get(key)
        if binding is None and autowirable(key):
            return Binding.of(key, key, Lifetime.TRANSIENT)
        return binding

    def resolvable(self, key: Any) -> bool:
        return self.node(key).ok

    def node(self, key: Any, path: tuple[str, ...] = ()) -> Node:
        """The analysed node for ``key``; problems carry paths starting at ``path``."""
        found = self._nodes.get(key)
        if found is not None:
            return found
        here = (*path, type_name(key))
        if key in self._visiting:
            start = self._visiting.index(key)
            cycle = (*tuple(type_name(k) for k in self._visiting[start:]), type_name(key))
            problem = Problem(
                ProblemKind.CYCLE,
                here,
                " -> ".join(cycle),
                "break the cycle: inject a factory or restructure one of the services",
            )
            return Node(key, Binding.instance(key, None), problems=[problem])
        binding = self.binding_for(key)
        if binding is None:
            problem = Problem(
                ProblemKind.MISSING,
                path,
                f"no binding for {type_name(key)}",
                _hint_for_missing(key),
            )
            return Node(key, Binding.instance(key, None), problems=[problem])
        self._visiting.append(key)
        try:
            node = self._analyse(key, binding, here)
        finally:
            self._visiting.pop()
        self._nodes[key] = node
        return node

    def _analyse(self, key: Any, binding: Binding, here: tuple[str, ...]) -> Node:
        node = Node(key, binding, is_async=binding.kind.is_async)
        node.scoped_below = binding.lifetime is Lifetime.SCOPED
        if binding.kind in (ProviderKind.INSTANCE, ProviderKind.EXTERNAL):
            return node
        try:
            params = parameters(binding.factory)
        except (AnnotationError, ValueError) as exc:
            node.problems.append(
                Problem(ProblemKind.INVALID, here, str(exc), "check the factory's signature")
            )
            return node
        deps, problems = self.dependencies(params, here, owner=binding.target)
        node.problems.extend(problems)
        captive: list[str] = []
        for dep in deps:
            child = self.node(dep.key, here)
            node.is_async = node.is_async or child.is_async
            if child.scoped_below and child.binding.lifetime is not Lifetime.SINGLETON:
                node.scoped_below = True
                captive.append(type_name(dep.key))
        if binding.lifetime is Lifetime.SINGLETON and captive:
            node.problems.append(
                Problem(
                    ProblemKind.CAPTIVE,
                    here,
                    f"singleton {type_name(key)} would capture per-scope {', '.join(captive)}",
                    "make the singleton scoped, or make its dependencies singletons",
                )
            )
        node.deps = tuple(deps)
        return node

    def dependencies(
        self,
        params: list[Param],
        here: tuple[str, ...],
        *,
        owner: Any,
        accept: Callable[[Param], bool] | None = None,
    ) -> tuple[list[Dependency], list[Problem]]:
        """Which parameters the container fills, and what stops the others.

        A parameter with a default whose type cannot be built keeps its
        default; an optional one without a default receives ``None``.
        ``accept`` lets a caller claim parameters for itself (they are skipped).
        """
        deps: list[Dependency] = []
        problems: list[Problem] = []
        in_order = True  # every earlier parameter is filled, so positional passing is safe
        for param in params:
            if accept is not None and not accept(param):
                in_order = False
                continue
            label = (*here[:-1], f"{here[-1]}({param.name})") if here else (param.name,)
            if param.variadic:
                in_order = False
                problems.append(
                    Problem(
                        ProblemKind.VARIADIC,
                        label,
                        f"{type_name(owner)} takes *{param.name}; the container cannot fill it",
                        "declare each dependency as a named, annotated parameter",
                    )
                )
                continue
            if param.key is inspect.Parameter.empty:
                in_order = False
                if not param.has_default:
                    problems.append(
                        Problem(
                            ProblemKind.UNANNOTATED,
                            label,
                            f"parameter {param.name!r} of {type_name(owner)} has no annotation",
                            f"annotate it: {param.name}: SomeService",
                        )
                    )
                continue
            child = self.node(param.key, label)
            if child.ok:
                positional = param.kind is inspect.Parameter.POSITIONAL_ONLY or (
                    in_order and param.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
                )
                deps.append(Dependency(param.name, param.key, positional))
                continue
            in_order = False
            if not (param.has_default or param.optional):
                problems.extend(child.problems)
        return deps, problems

    def all_problems(self, key: Any) -> list[Problem]:
        return list(self.node(key).problems)
