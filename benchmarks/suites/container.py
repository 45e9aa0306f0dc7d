"""The container benchmark: a scoped 5-node graph and a bare transient, side by side.

The workload (the graph, the transient, the hand-written floors and this
container's rows) is :mod:`benchmarks.workloads.container`; this module adds the
other containers and the targets.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import dishka
import diwire
import wireup
from dependency_injector import containers, providers

from benchmarks.harness.suite import RunOptions, Suite, Table, Target, row
from benchmarks.harness.timing import Case, ratio
from benchmarks.workloads.container import (
    OURS,
    SCOPED,
    TRANSIENT,
    A,
    B,
    C,
    Contender,
    D,
    E,
    Token,
    hand_written,
    lazy,
    ours,
    ours_root_transient,
    scoped_floors,
    transient_floors,
)

# -- the contenders, each wired the way its documentation shows ------------------------


def dishka_provider() -> dishka.Provider:
    provider = dishka.Provider()
    provider.provide(D, scope=dishka.Scope.APP)
    provider.provide(E, scope=dishka.Scope.REQUEST)
    provider.provide(B, scope=dishka.Scope.REQUEST)
    provider.provide(C, scope=dishka.Scope.REQUEST)
    provider.provide(A, scope=dishka.Scope.REQUEST)
    # dishka's transient: no cache, in the request scope (an APP-scoped one would be
    # resolved through the root container and its lock).
    provider.provide(Token, scope=dishka.Scope.REQUEST, cache=False)
    return provider


def dishka_sync() -> dishka.Container:
    return dishka.make_container(dishka_provider())


def dishka_async() -> dishka.AsyncContainer:
    return dishka.make_async_container(dishka_provider())


def _wireup_injectables() -> list[Any]:
    # @injectable, applied as a call so the classes stay shared with the others.
    return [
        wireup.injectable(D, lifetime="singleton"),
        wireup.injectable(E, lifetime="scoped"),
        wireup.injectable(B, lifetime="scoped"),
        wireup.injectable(C, lifetime="scoped"),
        wireup.injectable(A, lifetime="scoped"),
        wireup.injectable(Token, lifetime="transient"),
    ]


def wireup_sync() -> wireup.SyncContainer:
    return wireup.create_sync_container(injectables=_wireup_injectables())


def wireup_async() -> wireup.AsyncContainer:
    return wireup.create_async_container(injectables=_wireup_injectables())


def diwire_container() -> diwire.Container:
    """diwire as its performance docs benchmark it: strict mode, compiled before use.

    Strict mode (``MissingPolicy.ERROR`` + ``DependencyRegistrationPolicy.IGNORE``) with
    ``use_resolver_context=False`` lets ``compile()`` rebind ``enter_scope`` to the
    generated root resolver; ``LockMode.NONE`` is what diwire's own benchmarks use (the
    default ``"auto"`` takes thread locks on every cached path of a sync graph). One
    container serves both flavours: ``resolve`` in a ``with`` scope, ``aresolve`` in an
    ``async with`` one.
    """
    container = diwire.Container(
        lock_mode=diwire.LockMode.NONE,
        missing_policy=diwire.MissingPolicy.ERROR,
        dependency_registration_policy=diwire.DependencyRegistrationPolicy.IGNORE,
        use_resolver_context=False,
    )
    # SCOPED in the root scope (APP) is diwire's singleton.
    container.add(D, lifetime=diwire.Lifetime.SCOPED)
    for scoped in (E, B, C, A):
        container.add(scoped, lifetime=diwire.Lifetime.SCOPED, scope=diwire.Scope.REQUEST)
    container.add(Token, lifetime=diwire.Lifetime.TRANSIENT)
    container.compile()
    return container


class DIContainer(containers.DeclarativeContainer):
    """dependency-injector has no request scope: per-scope objects are Factories."""

    d = providers.Singleton(D)
    e = providers.Factory(E)
    b = providers.Factory(B, d=d)
    c = providers.Factory(C, d=d, e=e)
    a = providers.Factory(A, b=b, c=c)
    token = providers.Factory(Token)


# -- cases ---------------------------------------------------------------------------


DISHKA = Contender(
    "dishka",
    "dishka",
    "container",
    lambda is_async: dishka_async if is_async else dishka_sync,
    "__call__",
    name="request",
)
WIREUP = Contender(
    "wireup",
    "wireup",
    "container",
    lambda is_async: wireup_async if is_async else wireup_sync,
    "enter_scope",
)
DIWIRE = Contender(
    "diwire",
    "diwire",
    "scope",
    lambda _is_async: diwire_container,
    "enter_scope",
    aget="aresolve",
    sget="resolve",
    enter_with={"REQUEST": diwire.Scope.REQUEST},
)
CONTENDERS = (OURS, DISHKA, WIREUP, DIWIRE)


def _scoped_cases() -> list[Case]:
    s = SCOPED
    return [
        *scoped_floors(),
        *(c.scoped(is_async) for c in CONTENDERS for is_async in (False, True)),
        Case(
            s,
            "dependency-injector",
            "container.a()",
            lazy(container=DIContainer),
            tag="di",
            note="no request scope: Factory per object, no scope enter/exit",
        ),
    ]


def _transient_cases() -> list[Case]:
    t = TRANSIENT
    return [
        *transient_floors(),
        OURS.transient(False),
        ours_root_transient(),
        OURS.transient(True),
        DISHKA.transient(False, note="`cache=False` in Scope.REQUEST"),
        DISHKA.transient(True),
        WIREUP.transient(False),
        WIREUP.transient(True),
        DIWIRE.transient(False, note="Lifetime.TRANSIENT in the root scope"),
        DIWIRE.transient(True),
        Case(
            t,
            "dependency-injector",
            "container.token()",
            lazy(container=DIContainer),
            tag="di",
            note="providers.Factory",
        ),
    ]


def cases(options: RunOptions | None = None) -> list[Case]:
    return [*_scoped_cases(), *_transient_cases()]


# -- verification: every contender builds the same thing -------------------------------


def _check_graph(first: Any, again: Any, other_scope: Any, *, scoped: bool, who: str) -> None:
    problems: list[str] = []
    if not isinstance(first, A) or not isinstance(first.b, B) or not isinstance(first.c, C):
        problems.append("wrong types")
    if not isinstance(first.c.e, E) or not isinstance(first.b.d, D):
        problems.append("wrong leaf types")
    if first.b.d is not first.c.d:
        problems.append("D is not shared inside the graph")
    if first.b.d is not other_scope.b.d:
        problems.append("D is not a singleton across scopes")
    if first is other_scope:
        problems.append("A is shared across scopes")
    if scoped and first is not again:
        problems.append("A is not shared inside one scope")
    if problems:
        raise AssertionError(f"{who}: {'; '.join(problems)}")


def _check_overlap(outer: Any, inner: Any, after: Any, *, who: str) -> None:
    """Two scopes open at once share the singleton and nothing else."""
    problems: list[str] = []
    if inner is outer or inner.c.e is outer.c.e:
        problems.append("overlapping scopes share scoped objects")
    if inner.b.d is not outer.b.d:
        problems.append("D is not a singleton across overlapping scopes")
    if after is not outer:
        problems.append("a scope lost its objects when another one closed")
    if problems:
        raise AssertionError(f"{who}: {'; '.join(problems)}")


async def _verify(contender: Contender, is_async: bool) -> None:
    """Scopes opened as the timed statement opens them: the graph, a second scope, one
    opened while another is open, and the transient."""
    who = contender.row(is_async)[0]
    container = contender.make(is_async)()
    enter = container if contender.enter == "__call__" else getattr(container, contender.enter)
    method = contender.aget if is_async else contender.sget

    @contextlib.asynccontextmanager
    async def scope() -> AsyncIterator[Callable[[Any], Awaitable[Any]]]:
        async def get(key: Any) -> Any:
            found = getattr(opened, method)(key)
            return await found if is_async else found

        if is_async:
            async with enter(*contender.enter_with.values()) as opened:
                yield get
        else:
            with enter(*contender.enter_with.values()) as opened:
                yield get

    async with scope() as get:
        first, again, t1, t2 = [await get(key) for key in (A, A, Token, Token)]
    async with scope() as get:
        other = await get(A)
        async with scope() as inner_get:
            inner = await inner_get(A)
        after = await get(A)
    _check_graph(first, again, other, scoped=True, who=who)
    _check_overlap(other, inner, after, who=who)
    if not isinstance(t1, Token) or t1 is t2:
        raise AssertionError(f"{who}: Token is not transient")


def verify(options: RunOptions | None = None) -> None:
    floor_a, floor_b = hand_written(), hand_written()
    _check_graph(floor_a, floor_a, floor_b, scoped=True, who="hand-written")
    di = DIContainer()
    first, other = di.a(), di.a()
    _check_graph(first, first, other, scoped=False, who="dependency-injector")
    for name, get in (("this container", ours().get), ("diwire", diwire_container().resolve)):
        if get(Token) is get(Token):
            raise AssertionError(f"{name}: Token is not transient at the root")

    async def check() -> None:
        for contender in CONTENDERS:
            for is_async in (False, True):
                await _verify(contender, is_async)

    asyncio.run(check())


# -- targets (issue 2 and issue 8) --------------------------------------------------


RIVALS = ("dishka", "wireup", "diwire")
"""The libraries whose scoped rows this container must beat (issues 2 and 8)."""


def _x(ratio: float) -> str:
    return f"{ratio:.2f}x"


def _versus(rival: str, times: float) -> str:
    """``rival``'s time over ours, said the right way round."""
    if times < 1.0:
        return f"{rival} is {1 / times:.2f}x faster"
    return f"{rival} is {times:.2f}x slower"


SCOPED_LIMITS = {"sync": 2.2, "async": 2.5}
"""The scoped graph's targets, as a ratio to the sync hand-written floor."""


def targets(table: Table) -> list[Target]:
    found: list[Target] = []
    for mode in ("sync", "async"):
        ours_row = row(table, SCOPED, f"ours-{mode}")
        limit = SCOPED_LIMITS[mode]
        found.append(
            Target(
                f"scoped graph, {mode} scope: this container <= {limit}x the floor",
                ours_row.ratio <= limit,
                _x(ours_row.ratio),
            )
        )
        mine = ours_row.result
        rivals = [row(table, SCOPED, f"{lib}-{mode}") for lib in RIVALS]
        slower = [r for r in rivals if ratio(r.result, mine) <= 1.0]
        found.append(
            Target(
                f"scoped graph, {mode} scope: this container faster than dishka, wireup and diwire",
                not slower,
                ", ".join(
                    _versus(r.case.name.split(" ")[0], ratio(r.result, mine)) for r in rivals
                ),
            )
        )
    transient = row(table, TRANSIENT, "ours-sync")
    found.append(
        Target(
            "transient (sync scope): this container <= 2x the floor",
            transient.ratio <= 2.0,
            _x(transient.ratio),
        )
    )
    return found


SUITE = Suite(
    name="container",
    title="Container: scoped graph and transient",
    scenarios={
        SCOPED: "Scope enter + resolve a 5-node graph + scope exit",
        TRANSIENT: "Resolve a transient with no dependencies (scope already open)",
    },
    cases=cases,
    verify=verify,
    targets=targets,
    packages=("mcp-adapter-di", "dishka", "wireup", "diwire", "dependency-injector"),
    limits={SCOPED: 2.5, TRANSIENT: 2.0},
    notes=(
        "Graph: A(B, C), B(D), C(D, E); D singleton, A/B/C/E scoped. Every contender "
        "is checked before timing to build exactly this (D shared, A shared inside a "
        "scope, new A per scope, new Token per call, two scopes open at once share only D).",
        "dependency-injector has no request scope, so A, B, C and E are `providers.Factory` "
        "and D is `providers.Singleton`; its row has no scope enter/exit. The graph has no "
        "scoped object used twice, so it builds the same objects.",
        "dishka: `make_container` / `make_async_container` with one `Provider`, D in "
        "`Scope.APP`, the rest in `Scope.REQUEST`; the transient is `cache=False`.",
        "wireup: `@injectable` with `lifetime=` singleton/scoped/transient, "
        "`create_sync_container` / `create_async_container`, `enter_scope()`.",
        "diwire: one `Container` in strict mode (`MissingPolicy.ERROR`, "
        "`DependencyRegistrationPolicy.IGNORE`), `use_resolver_context=False`, "
        '`lock_mode=LockMode.NONE` (as diwire\'s own benchmarks; its default `"auto"` '
        "locks every cached path of a sync graph), `compile()`d before timing; D is "
        "`Lifetime.SCOPED` in the root scope (its singleton), the rest `Lifetime.SCOPED` "
        "in `Scope.REQUEST`, Token `Lifetime.TRANSIENT`; "
        "`with container.enter_scope(Scope.REQUEST) as s: s.resolve(A)` and "
        "`async with ...: await s.aresolve(A)`.",
        "Ratios are to the sync hand-written floor, also for async rows; the "
        "'hand-written, awaited' row shows what one `await` alone adds.",
    ),
)
