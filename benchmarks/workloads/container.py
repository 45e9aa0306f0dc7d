"""The container workload: a scoped 5-node graph, a transient, and the hand-written floors.

Shared by the timed suite (:mod:`benchmarks.suites.container`) and the
instruction counts (:mod:`benchmarks.counts`). It imports only the standard
library and this project's ``container``, so counting does not import the
other containers the timed suite sets side by side.

Graph (same classes for every contender)::

    A(b: B, c: C)      scoped
    B(d: D)            scoped
    C(d: D, e: E)      scoped
    D()                singleton
    E()                scoped

Scenario ``scoped``: open a scope, resolve ``A`` (which builds A, B, C, E and
reuses the singleton D), close the scope. Scenario ``transient``: resolve a
class with no dependencies and a transient lifetime, from a scope that is
already open.

The floor is the same work written by hand: ``A(B(D), C(D, E()))`` with D a
prebuilt module-level singleton, and ``Token()``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from benchmarks.harness.timing import Case
from container import Container

SCOPED = "scoped"
TRANSIENT = "transient"


class D:
    pass


class E:
    pass


class B:
    def __init__(self, d: D) -> None:
        self.d = d


class C:
    def __init__(self, d: D, e: E) -> None:
        self.d = d
        self.e = e


class A:
    def __init__(self, b: B, c: C) -> None:
        self.b = b
        self.c = c


class Token:
    pass


# -- the floor: hand-written constructors ------------------------------------------

D_SINGLETON = D()


def hand_written() -> A:
    return A(B(D_SINGLETON), C(D_SINGLETON, E()))


async def hand_written_async() -> A:
    return A(B(D_SINGLETON), C(D_SINGLETON, E()))


async def token_async() -> Token:
    return Token()


def ours() -> Container:
    container = Container()
    container.singleton(D)
    container.scoped(E)
    container.scoped(B)
    container.scoped(C)
    container.scoped(A)
    container.transient(Token)
    container.validate()
    return container


# -- cases ---------------------------------------------------------------------------


def _names(**names: Any) -> Callable[[], Mapping[str, Any]]:
    return lambda: names


def lazy(**factories: Callable[[], Any]) -> Callable[[], Mapping[str, Any]]:
    """Setup that builds each named object when the harness asks (one per case)."""
    return lambda: {name: make() for name, make in factories.items()}


@dataclass(frozen=True)
class Contender:
    """A container with a sync and an async flavour, entered and resolved the same way."""

    label: str
    """Row label before the flavour, e.g. ``"dishka"``."""
    lib: str
    """Tag prefix: rows are tagged ``<lib>-sync`` / ``<lib>-async``."""
    flavour: str
    """What the flavour names: ``"scope"`` or ``"container"``."""
    make: Callable[[bool], Callable[[], Any]]
    """The factory of the sync (False) or async (True) container."""
    enter: str
    """The method that opens a scope (``__call__`` for calling the container)."""
    name: str = "scope"
    """The name the opened scope is bound to in the statement."""
    aget: str = "get"
    """The method an async scope resolves with."""
    sget: str = "get"
    """The method a sync scope resolves with."""
    enter_with: Mapping[str, Any] = field(default_factory=dict)
    """Arguments of ``enter``: the name in the statement -> its value (bound by setup)."""

    def row(self, is_async: bool) -> tuple[str, str]:
        mode = "async" if is_async else "sync"
        return f"{self.label} ({mode} {self.flavour})", f"{self.lib}-{mode}"

    def get(self, is_async: bool, key: str, name: str) -> str:
        """The statement that resolves ``key`` from the scope bound to ``name``."""
        return f"await {name}.{self.aget}({key})" if is_async else f"{name}.{self.sget}({key})"

    def scoped(self, is_async: bool) -> Case:
        """Scenario ``scoped``: enter a scope, resolve ``A``, exit."""
        name, tag = self.row(is_async)
        args = ", ".join(self.enter_with)
        opened = (
            f"container({args})" if self.enter == "__call__" else f"container.{self.enter}({args})"
        )
        stmt = f"""
            {"async " if is_async else ""}with {opened} as {self.name}:
                {self.get(is_async, "A", self.name)}
            """
        make = self.make(is_async)
        bound = {name: (lambda value=value: value) for name, value in self.enter_with.items()}
        setup = lazy(container=make, A=lambda: A, **bound)
        return Case(SCOPED, name, stmt, setup, is_async=is_async, tag=tag)

    def transient(self, is_async: bool, note: str = "") -> Case:
        """Scenario ``transient``: resolve ``Token`` from a scope opened at setup."""
        name, tag = self.row(is_async)
        opened = _open_async_setup if is_async else _open_sync_setup
        # binds the open scope to `scope`
        setup = opened(self.make(is_async), self.enter, tuple(self.enter_with.values()))
        stmt = self.get(is_async, "Token", "scope")
        return Case(TRANSIENT, name, stmt, setup, is_async=is_async, note=note, tag=tag)


OURS = Contender("this container", "ours", "scope", lambda _is_async: ours, "scope", aget="aget")


async def _open_async(
    factory: Callable[[], Any], enter: str, args: tuple[Any, ...]
) -> Mapping[str, Any]:
    """An async scope entered as ``async with`` does, left open for the timed loop."""
    opened = getattr(factory(), enter)(*args)
    return {"scope": await opened.__aenter__(), "Token": Token}


def _open_async_setup(
    factory: Callable[[], Any], enter: str, args: tuple[Any, ...] = ()
) -> Callable[[], Awaitable[Mapping[str, Any]]]:
    return lambda: _open_async(factory, enter, args)


def _open_sync_setup(
    factory: Callable[[], Any], enter: str, args: tuple[Any, ...] = ()
) -> Callable[[], Mapping[str, Any]]:
    """A sync scope entered as ``with`` does, left open for the timed loop."""

    def setup() -> Mapping[str, Any]:
        opened = getattr(factory(), enter)(*args)
        return {"scope": opened.__enter__(), "Token": Token}

    return setup


# -- the rows every run has: the floors and this container -----------------------------


def scoped_floors() -> list[Case]:
    """The hand-written graph (the anchor) and the same inside one ``async def``."""
    return [
        Case(
            SCOPED,
            "hand-written (floor)",
            "A(B(D_SINGLETON), C(D_SINGLETON, E()))",
            _names(A=A, B=B, C=C, E=E, D_SINGLETON=D_SINGLETON),
            anchor=True,
            tag="floor",
            note="constructors called by hand; D prebuilt",
        ),
        Case(
            SCOPED,
            "hand-written, awaited",
            "await build()",
            _names(build=hand_written_async),
            is_async=True,
            tag="floor-async",
            note="the floor inside one `async def`: the least an awaited resolve costs",
        ),
    ]


def transient_floors() -> list[Case]:
    """``Token()`` (the anchor) and the same inside one ``async def``."""
    return [
        Case(
            TRANSIENT,
            "hand-written (floor)",
            "Token()",
            _names(Token=Token),
            anchor=True,
            tag="floor",
        ),
        Case(
            TRANSIENT,
            "hand-written, awaited",
            "await make()",
            _names(make=token_async),
            is_async=True,
            tag="floor-async",
            note="`Token()` inside one `async def`",
        ),
    ]


def ours_root_transient() -> Case:
    """``container.get(Token)``: a transient from the container itself, no scope."""
    return Case(
        TRANSIENT,
        "this container (root, no scope)",
        "container.get(Token)",
        lazy(container=ours, Token=lambda: Token),
        tag="ours-root",
    )


def scope_pieces() -> list[Case]:
    """The scoped row taken apart (counted only: ``benchmarks.counts``): making a scope,
    entering and leaving it with nothing resolved, in both flavours. What the whole row
    costs beyond them is the resolution of ``A`` in a new scope."""

    def case(name: str, stmt: str, tag: str, *, is_async: bool = False) -> Case:
        return Case(
            SCOPED, name, stmt, lazy(container=ours), is_async=is_async, tag=tag, note="a piece"
        )

    return [
        case("this container: container.scope() alone", "container.scope()", "ours-new-scope"),
        case(
            "this container: with container.scope(): pass",
            "with container.scope() as scope:\n    pass",
            "ours-empty-sync",
        ),
        case(
            "this container: async with container.scope(): pass",
            "async with container.scope() as scope:\n    pass",
            "ours-empty-async",
            is_async=True,
        ),
    ]
