"""The dependency graph: which binding serves each key, what it needs, what is wrong."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from container.binding import Binding, ProviderKind
from container.errors import Problem, ProblemKind
from container.introspect import AnnotationError, Param, parameters, type_name
from container.lifetime import APP, Lifetime

_NOT_AUTOWIRED_MODULES = frozenset({"builtins", "typing", "types", "collections.abc", "abc"})


_NO_VALUE: Any = object()


@dataclass(frozen=True, slots=True)
class Dependency:
    """A parameter of a factory that the container fills.

    A *constant* dependency passes ``value`` instead of resolving ``key``: an
    optional parameter whose type cannot be built receives ``None``, and a
    positional-only parameter that keeps its default is passed it explicitly.
    """

    name: str
    key: Any
    positional: bool
    value: Any = field(default=_NO_VALUE, compare=False)
    or_none: bool = False
    """An optional parameter of a context type: ``None`` when the scope was not given one."""

    @property
    def is_constant(self) -> bool:
        return self.value is not _NO_VALUE


@dataclass(slots=True)
class Node:
    """A key as the container will build it.

    ``is_async`` is true when the key or anything below it needs awaiting;
    ``level`` is the deepest scope level it needs (0: the container, 1: a
    session, 2: a request; see ``Lifetime.level``), and ``level_via`` names the
    steps from this key down to the key that needs it.
    ``problems`` carry paths relative to this node: they start at its own
    step (a missing key has an empty path; its parent names the parameter).
    """

    key: Any
    binding: Binding
    deps: tuple[Dependency, ...] = ()
    is_async: bool = False
    level: int = APP
    level_via: tuple[str, ...] = ()
    level_from: Binding | None = None
    """The binding at the end of ``level_via``: what sets the level."""
    contexts: frozenset[Any] = frozenset()
    """The context values (``container.context``) it needs, itself or below."""
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def autowirable(key: Any) -> bool:
    """Whether an unbound key may be built from its constructor annotations.

    Standard-library classes are values (``uuid.UUID``, ``fractions.Fraction``),
    not services: they are only injected when bound.
    """
    return (
        isinstance(key, type)
        and key.__module__ not in _NOT_AUTOWIRED_MODULES
        and key.__module__.partition(".")[0] not in sys.stdlib_module_names
        and not inspect.isabstract(key)
        and not getattr(key, "_is_protocol", False)
    )


def autowired_lifetime(key: Any) -> Lifetime:
    """The lifetime an unbound class is autowired with: its ``__lifetime__``, else transient.

    A class that is one per container by nature (a registry, a notifier) says
    ``__lifetime__ = Lifetime.SINGLETON``, so every ``get`` of it, bound or not,
    gives the same one; a binding's own lifetime wins over it.
    """
    found = getattr(key, "__lifetime__", Lifetime.TRANSIENT)
    if not isinstance(found, Lifetime):
        raise TypeError(f"{type_name(key)}.__lifetime__ must be a Lifetime, not {found!r}")
    return found


def _hint_for_missing(key: Any) -> str:
    name = type_name(key)
    if isinstance(key, type) and (inspect.isabstract(key) or getattr(key, "_is_protocol", False)):
        return f"bind an implementation: container.scoped({name}, Impl)"
    if isinstance(key, type) and key.__module__ in _NOT_AUTOWIRED_MODULES:
        return f"{name} is a builtin type; give the parameter a default or bind a value"
    return f"bind it: container.instance({name}, value) or container.scoped({name}, factory)"


def prefixed(problem: Problem, prefix: tuple[str, ...]) -> Problem:
    """``problem`` seen from further up: ``prefix`` steps are put in front of its path."""
    return replace(problem, path=(*prefix, *problem.path))


def rooted(problems: list[Problem], key: Any) -> list[Problem]:
    """Problems of the node for ``key`` as seen when ``key`` itself is the root asked for."""
    return [p if p.path else replace(p, path=(type_name(key),)) for p in problems]


def cause(problem: Problem) -> Any:
    """What makes two problems the same one reached by different paths."""
    if problem.kind is ProblemKind.CYCLE:
        return problem.kind, frozenset(problem.message.split(" -> "))
    return problem.kind, problem.message, problem.path[-1] if problem.path else None


_NO_DEPENDENCIES = frozenset({ProviderKind.INSTANCE, ProviderKind.CONTEXT})


_AS = {
    Lifetime.SINGLETON: "a singleton",
    Lifetime.SESSION: "session-scoped",
    Lifetime.SCOPED: "scoped",
    Lifetime.TRANSIENT: "transient",
}


def _captive(name: str, lifetime: Lifetime, captured: Node) -> Problem:
    """``name`` (of ``lifetime``) would keep a value that lives in a deeper scope."""
    held = captured.level_via[-1]
    through = captured.level_via[:-1]
    via = f" through {' -> '.join(through)}" if through else ""
    source = captured.level_from or captured.binding
    deeper = source.lifetime
    if source.kind is ProviderKind.CONTEXT:
        what = f"context value {held}"
        hint = (
            f"make {name} {_AS[deeper]}, or pass what it needs from {held} to the method "
            "that uses it"
        )
    else:
        what = f"{deeper.value} {held}"
        hint = f"make {name} {_AS[deeper]}, or make {held} {_AS[lifetime]}"
    return Problem(
        ProblemKind.CAPTIVE,
        (name, *captured.level_via),
        f"{lifetime.value} {name} would capture {what}{via}",
        hint,
    )


class Graph:
    """Analyses keys against a set of bindings; memoizes a ``Node`` per key."""

    def __init__(self, bindings: Mapping[Any, Binding]) -> None:
        self._bindings = bindings
        self._nodes: dict[Any, Node] = {}
        self._visiting: list[Any] = []
        self._scratch: dict[Any, Node] = {}
        """Nodes on a cycle: valid while one root is analysed (their paths depend on it)."""

    def binding_for(self, key: Any) -> Binding | None:
        binding = self._bindings.get(key)
        if binding is None and autowirable(key):
            return Binding.of(key, key, autowired_lifetime(key))
        return binding

    def resolvable(self, key: Any) -> bool:
        return self.node(key).ok

    def node(self, key: Any, path: tuple[str, ...] = ()) -> Node:
        """The analysed node for ``key``.

        Its problems' paths are relative to it; ``path`` (kept for callers
        that want the full chain) is put in front of every one of them.
        """
        found = self._nodes.get(key) or self._scratch.get(key)
        if found is None:
            outermost = not self._visiting
            try:
                found = self._analysed(key)
            finally:
                if outermost:
                    self._scratch.clear()
        if path and found.problems:
            return replace(found, problems=[prefixed(p, path) for p in found.problems])
        return found

    def _analysed(self, key: Any) -> Node:
        name = type_name(key)
        if key in self._visiting:
            start = self._visiting.index(key)
            cycle = " -> ".join([*(type_name(k) for k in self._visiting[start:]), name])
            problem = Problem(
                ProblemKind.CYCLE,
                (name,),
                cycle,
                "break the cycle: inject a factory or restructure one of the services",
            )
            return Node(key, Binding.instance(key, None), problems=[problem])
        binding = self.binding_for(key)
        if binding is None:
            problem = Problem(
                ProblemKind.MISSING, (), f"no binding for {name}", _hint_for_missing(key)
            )
            return Node(key, Binding.instance(key, None), problems=[problem])
        self._visiting.append(key)
        try:
            node = self._analyse(key, binding, name)
        finally:
            self._visiting.pop()
        if any(p.kind is ProblemKind.CYCLE for p in node.problems):
            self._scratch[key] = node  # how the cycle reads depends on where analysis started
        else:
            self._nodes[key] = node
        return node

    def _analyse(self, key: Any, binding: Binding, name: str) -> Node:
        node = Node(key, binding, is_async=binding.kind.is_async)
        own = binding.lifetime.level
        if own > APP:
            node.level, node.level_via, node.level_from = own, (name,), binding
        if binding.kind is ProviderKind.CONTEXT:
            node.contexts = frozenset((key,))
        if binding.kind in _NO_DEPENDENCIES or binding.kind.is_external:
            return node
        try:
            params = parameters(binding.factory)
        except (AnnotationError, ValueError, TypeError) as exc:
            node.problems.append(
                Problem(ProblemKind.INVALID, (name,), str(exc), "check the factory's signature")
            )
            return node
        deps, problems = self.dependencies(params, (name,), owner=binding.target)
        node.problems.extend(problems)
        deepest: Node | None = None
        for dep in deps:
            if dep.is_constant:
                continue
            child = self.node(dep.key)
            node.is_async = node.is_async or child.is_async
            if child.contexts:
                node.contexts = node.contexts | child.contexts
            if child.level > (deepest.level if deepest is not None else APP):
                deepest = child
        if deepest is not None and deepest.level > node.level:
            if binding.lifetime is Lifetime.TRANSIENT:
                node.level, node.level_via = deepest.level, (name, *deepest.level_via)
                node.level_from = deepest.level_from
            else:
                node.problems.append(_captive(name, binding.lifetime, deepest))
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

        ``here`` is the path to the owner of ``params`` (its last step names
        the owner); problems come back with paths that start with it. A
        parameter with a default whose type cannot be built keeps its
        default; an optional one without a default receives ``None``.
        ``accept`` lets a caller claim parameters for itself (they are skipped).
        """
        deps: list[Dependency] = []
        problems: list[Problem] = []
        in_order = True  # every earlier parameter is passed, so positional passing is safe
        owner_step = here[-1] if here else type_name(owner)
        above = here[:-1]
        for param in params:
            at_param = (*above, f"{owner_step}({param.label})")
            if accept is not None and not accept(param):
                in_order = False
                continue
            if param.variadic:
                in_order = False
                problems.append(
                    Problem(
                        ProblemKind.VARIADIC,
                        at_param,
                        f"{type_name(owner)} takes {param.label}; the container cannot fill it",
                        "declare each dependency as a named, annotated parameter",
                    )
                )
                continue
            positional_only = param.kind is inspect.Parameter.POSITIONAL_ONLY
            if param.key is inspect.Parameter.empty:
                if not param.has_default:
                    in_order = False
                    problems.append(
                        Problem(
                            ProblemKind.UNANNOTATED,
                            at_param,
                            f"parameter {param.name!r} of {type_name(owner)} has no annotation",
                            f"annotate it: {param.name}: SomeService",
                        )
                    )
                elif positional_only and in_order:
                    deps.append(Dependency(param.name, param.key, True, param.default))
                else:
                    in_order = False
                continue
            positional = positional_only or (
                in_order and param.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
            )
            child = self.node(param.key)
            if child.ok:
                or_none = param.optional and child.binding.kind is ProviderKind.CONTEXT
                deps.append(Dependency(param.name, param.key, positional, or_none=or_none))
                continue
            if param.has_default:
                if positional_only and in_order:
                    deps.append(Dependency(param.name, param.key, True, param.default))
                else:
                    in_order = False
            elif param.optional:
                deps.append(Dependency(param.name, param.key, positional, None))
            else:
                in_order = False
                for problem in child.problems:
                    steps = (*here,) if problem.path else at_param
                    problems.append(prefixed(problem, steps))
        return deps, problems

    def all_problems(self, key: Any) -> list[Problem]:
        return rooted(list(self.node(key).problems), key)

    def problems_under(self, roots: Iterable[Any]) -> tuple[Problem, ...]:
        """Every problem under ``roots`` (keys or callables), each cause reported once.

        A cause reached from several roots keeps its longest path (a cycle:
        its shortest, the loop alone).
        """
        problems: list[Problem] = []
        where: dict[Any, int] = {}
        for root in roots:
            for problem in self._root_problems(root):
                known = where.get(cause(problem))
                if known is None:
                    where[cause(problem)] = len(problems)
                    problems.append(problem)
                elif _more_telling(problem, problems[known]):
                    problems[known] = problem
        return tuple(problems)

    def _root_problems(self, root: Any) -> list[Problem]:
        if root in self._bindings or isinstance(root, type) or not callable(root):
            return self.all_problems(root)
        name = type_name(root)
        try:
            params = parameters(root)
        except (AnnotationError, ValueError, TypeError) as exc:
            return [Problem(ProblemKind.INVALID, (name,), str(exc), "check the signature")]
        _, problems = self.dependencies(params, (name,), owner=root)
        return problems


def _more_telling(new: Problem, old: Problem) -> bool:
    """A longer path shows more context; a cycle reads best as the loop alone."""
    if new.kind is ProblemKind.CYCLE:
        return len(new.path) < len(old.path)
    return len(new.path) > len(old.path)
