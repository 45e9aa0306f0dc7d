"""Property tests over random dependency DAGs of generated classes.

Each DAG is a list of nodes; node ``i`` is a class ``N{i}`` whose ``__init__`` takes
annotated parameters of earlier nodes (so there is no cycle). Lifetimes are random but
never captive: a singleton only depends on nodes that reach no scoped node.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any
from unittest import mock

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from container import Container, Lifetime, codegen

SINGLETON, SCOPED, TRANSIENT = Lifetime.SINGLETON, Lifetime.SCOPED, Lifetime.TRANSIENT
BOUNDED = settings(max_examples=60, deadline=None)


@dataclass(frozen=True)
class Dag:
    lifetimes: tuple[Lifetime, ...]
    deps: tuple[tuple[int, ...], ...]
    bound: tuple[bool, ...]  # False: left unbound (autowired; only transients)
    string_annotations: bool

    def __len__(self) -> int:
        return len(self.lifetimes)


@st.composite
def dags(draw: st.DrawFn, lifetimes: tuple[Lifetime, ...] = (SINGLETON, SCOPED, TRANSIENT)) -> Dag:
    size = draw(st.integers(1, 7))
    chosen: list[Lifetime] = []
    deps: list[tuple[int, ...]] = []
    bound: list[bool] = []
    reaches_scoped: list[bool] = []
    for i in range(size):
        lifetime = draw(st.sampled_from(lifetimes))
        allowed = [j for j in range(i) if lifetime is not SINGLETON or not reaches_scoped[j]]
        mine: tuple[int, ...] = ()
        if allowed:
            mine = tuple(draw(st.lists(st.sampled_from(allowed), max_size=3)))
        chosen.append(lifetime)
        deps.append(mine)
        bound.append(lifetime is not TRANSIENT or draw(st.booleans()))
        reaches_scoped.append(
            lifetime is SCOPED or (lifetime is TRANSIENT and any(reaches_scoped[j] for j in mine))
        )
    return Dag(tuple(chosen), tuple(deps), tuple(bound), draw(st.booleans()))


def generate(dag: Dag, factory_kinds: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Exec the source of the DAG's classes (and factories); return the namespace.

    ``factory_kinds[i]`` is ``"class"``, ``"sync"`` (generator function) or
    ``"async"`` (async generator function) for node ``i``; generator factories log
    ``("open", uid)`` / ``("close", uid)`` into the namespace's ``LOG``.
    """
    lines = ["from __future__ import annotations"] if dag.string_annotations else []
    for i, deps in enumerate(dag.deps):
        params = "".join(f", p{k}: N{j}" for k, j in enumerate(deps))
        values = "".join(f"p{k}, " for k in range(len(deps)))
        lines += [
            f"class N{i}:",
            f"    def __init__(self{params}) -> None:",
            f"        self.deps = ({values})",
            "        self.uid = next(UIDS)",
        ]
        kind = factory_kinds[i] if factory_kinds else "class"
        args = ", ".join(f"p{k}" for k in range(len(deps)))
        if kind == "sync":
            lines += [
                f"def make{i}({params.lstrip(', ')}) -> Iterator[N{i}]:",
                f"    value = N{i}({args})",
                "    LOG.append(('open', value.uid))",
                "    yield value",
                "    LOG.append(('close', value.uid))",
            ]
        elif kind == "async":
            lines += [
                f"async def make{i}({params.lstrip(', ')}) -> AsyncIterator[N{i}]:",
                "    await anyio.sleep(0)",
                f"    value = N{i}({args})",
                "    LOG.append(('open', value.uid))",
                "    yield value",
                "    await anyio.sleep(0)",
                "    LOG.append(('close', value.uid))",
            ]
    namespace: dict[str, Any] = {"__name__": "generated_dag", "UIDS": itertools.count()}
    namespace.update(LOG=[], anyio=anyio)
    exec("from collections.abc import AsyncIterator, Iterator", namespace)
    exec("\n".join(lines), namespace)
    return namespace


def wire(dag: Dag, namespace: dict[str, Any], factory_kinds: tuple[str, ...] | None = None):  # type: ignore[no-untyped-def]
    container = Container()
    for i, lifetime in enumerate(dag.lifetimes):
        kind = factory_kinds[i] if factory_kinds else "class"
        if dag.bound[i] or kind != "class":
            target = namespace[f"N{i}"] if kind == "class" else namespace[f"make{i}"]
            container.bind(namespace[f"N{i}"], target, lifetime)
    return container


def hand_wire(dag: Dag, namespace: dict[str, Any]):  # type: ignore[no-untyped-def]
    """The reference: constructors called by hand, lifetimes kept in plain dicts."""
    singletons: dict[int, Any] = {}

    def build(i: int, cache: dict[int, Any]) -> Any:
        lifetime = dag.lifetimes[i]
        store = singletons if lifetime is SINGLETON else cache if lifetime is SCOPED else None
        if store is not None and i in store:
            return store[i]
        value = namespace[f"N{i}"](*(build(j, cache) for j in dag.deps[i]))
        if store is not None:
            store[i] = value
        return value

    return build


def shape(objects: list[Any]) -> list[Any]:
    """The object graph with identities replaced by first-seen labels."""
    labels: dict[int, int] = {}

    def walk(obj: Any) -> Any:
        if id(obj) in labels:
            return ("same as", labels[id(obj)])
        labels[id(obj)] = len(labels)
        return (type(obj).__name__, tuple(walk(dep) for dep in obj.deps))

    return [walk(obj) for obj in objects]


def everything(objects: list[Any]) -> list[Any]:
    found: list[Any] = []
    stack = list(objects)
    while stack:
        obj = stack.pop()
        found.append(obj)
        stack.extend(obj.deps)
    return found


resolutions = st.lists(st.tuples(st.integers(0, 1), st.integers(0, 6)), min_size=1, max_size=8)


@pytest.mark.parametrize("inline_budget", [codegen.INLINE_BUDGET, 1])
@BOUNDED
@given(dag=dags(), plan=resolutions)
def test_container_builds_what_hand_wiring_builds(
    inline_budget: int, dag: Dag, plan: list[tuple[int, int]]
) -> None:
    namespace = generate(dag)
    container = wire(dag, namespace)
    assert container.check() == ()
    plan = [(scope, node % len(dag)) for scope, node in plan]
    with (
        mock.patch.object(codegen, "INLINE_BUDGET", inline_budget),
        container.scope() as first,
        container.scope() as second,
    ):
        scopes = (first, second)
        built = [scopes[s].get(namespace[f"N{i}"]) for s, i in plan]
    build = hand_wire(dag, namespace)
    caches: tuple[dict[int, Any], dict[int, Any]] = ({}, {})
    expected = [build(i, caches[s]) for s, i in plan]
    assert shape(built) == shape(expected)


@BOUNDED
@given(dag=dags(), plan=resolutions)
def test_scoped_identity_within_a_scope_and_not_across(
    dag: Dag, plan: list[tuple[int, int]]
) -> None:
    namespace = generate(dag)
    container = wire(dag, namespace)
    plan = [(scope, node % len(dag)) for scope, node in plan]
    per_scope: tuple[list[Any], list[Any]] = ([], [])
    with container.scope() as first, container.scope() as second:
        scopes = (first, second)
        for s, i in plan:
            per_scope[s].append(scopes[s].get(namespace[f"N{i}"]))
        for i, lifetime in enumerate(dag.lifetimes):
            cls = namespace[f"N{i}"]
            if lifetime is SCOPED:
                assert first.get(cls) is first.get(cls)
                assert first.get(cls) is not second.get(cls)
            elif lifetime is SINGLETON:
                assert first.get(cls) is second.get(cls) is container.get(cls)
            else:
                assert first.get(cls) is not first.get(cls)
    seen: dict[str, set[int]] = {}
    for s, objects in enumerate(per_scope):
        for obj in everything(objects):
            name = type(obj).__name__
            if dag.lifetimes[int(name[1:])] is SCOPED:
                seen.setdefault(f"{name}@{s}", set()).add(id(obj))
                assert len(seen[f"{name}@{s}"]) == 1  # one instance per scope
    for name in {key.split("@")[0] for key in seen}:
        if f"{name}@0" in seen and f"{name}@1" in seen:
            assert seen[f"{name}@0"] != seen[f"{name}@1"]


kinds = st.sampled_from(("class", "sync", "async"))


@BOUNDED
@given(
    dag=dags(),
    factory_kinds=st.lists(kinds, min_size=7, max_size=7).map(tuple),
    plan=st.lists(st.integers(0, 6), min_size=1, max_size=8),
    body_fails=st.booleans(),
)
def test_finalizers_run_once_each_in_reverse_order_of_creation(
    dag: Dag, factory_kinds: tuple[str, ...], plan: list[int], body_fails: bool
) -> None:
    namespace = generate(dag, factory_kinds)
    container = wire(dag, namespace, factory_kinds)
    log: list[tuple[str, int]] = namespace["LOG"]
    phases: dict[str, list[tuple[str, int]]] = {}

    async def main() -> None:
        try:
            async with container.scope() as scope:
                for i in plan:
                    await scope.aget(namespace[f"N{i % len(dag)}"])
                phases["opened"] = list(log)
                if body_fails:
                    raise LookupError("body failed")
        except LookupError:
            assert body_fails
        phases["scope closed"] = log[len(phases["opened"]) :]
        await container.aclose()
        phases["container closed"] = log[len(phases["opened"]) + len(phases["scope closed"]) :]

    anyio.run(main)
    opened = [uid for event, uid in phases["opened"] if event == "open"]
    assert all(event == "open" for event, _ in phases["opened"])
    by_scope = [uid for event, uid in phases["scope closed"] if event == "close"]
    by_container = [uid for event, uid in phases["container closed"] if event == "close"]
    assert len(by_scope) == len(phases["scope closed"])
    assert len(by_container) == len(phases["container closed"])
    # each finalizer ran exactly once
    assert sorted(by_scope + by_container) == sorted(opened)
    # each owner ran its finalizers in reverse order of creation
    assert by_scope == [uid for uid in reversed(opened) if uid in set(by_scope)]
    assert by_container == [uid for uid in reversed(opened) if uid in set(by_container)]


@BOUNDED
@given(
    dag=dags(lifetimes=(SCOPED, TRANSIENT)),
    plan=st.lists(st.integers(0, 6), min_size=1, max_size=8),
)
def test_sync_scope_finalizes_sync_generators_in_reverse_order(dag: Dag, plan: list[int]) -> None:
    factory_kinds = ("sync",) * len(dag)
    namespace = generate(dag, factory_kinds)
    container = wire(dag, namespace, factory_kinds)
    log: list[tuple[str, int]] = namespace["LOG"]
    with container.scope() as scope:
        for i in plan:
            scope.get(namespace[f"N{i % len(dag)}"])
        opened = [uid for event, uid in log]
    closed = [uid for event, uid in log[len(opened) :]]
    assert closed == opened[::-1]
