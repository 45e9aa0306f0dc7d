"""Timing: timeit-style loops, many repeats, medians, ratios to an anchor.

A :class:`Case` is one statement to time (``stmt``, which may ``await`` when
``is_async``) plus the names it uses (``setup()`` returns them). The harness
generates one function per case whose body is ``for _ in range(n): <stmt>``
with every name bound as a local, so no case pays a closure call or a global
lookup that another does not.

All cases of a run are calibrated first (which also warms them up: compiled
plans, singletons, caches), then timed in *rounds*: each round times every
case once, in a fresh order. A slow moment of a noisy machine therefore hits
all cases of a round rather than one case's whole sample.

What the cases set up is frozen out of the garbage collector's generations
(``gc.freeze()``) once set up, so the ``gc.collect()`` before every sample
costs little even when the cases hold big object graphs (servers of 10,000
tools); the collector stays off inside a sample either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import inspect
import random
import statistics
import textwrap
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")
Timer = Callable[[int], float]


@dataclass(frozen=True)
class Case:
    """One thing to time: ``stmt`` run ``n`` times with the names ``setup()`` returns."""

    scenario: str
    """Which table the case belongs to (cases of one scenario share an anchor)."""
    name: str
    """Row label, e.g. ``"this container (sync scope)"``."""
    stmt: str
    setup: Callable[[], Mapping[str, Any] | Awaitable[Mapping[str, Any]]]
    """The names ``stmt`` uses; awaited in the benchmark's event loop when awaitable."""
    is_async: bool = False
    anchor: bool = False
    """The row every other row of the scenario is divided by (one per scenario)."""
    note: str = ""
    tag: str = ""
    """A free label suites use to find rows again (e.g. for target checks)."""
    per: int = 1
    """Units of work one ``stmt`` does (e.g. pages in a full listing); figures are per unit."""
    teardown: Callable[[Mapping[str, Any]], object] | None = None
    """Called with the setup's names after the last round (awaited when awaitable)."""


@dataclass(frozen=True)
class Settings:
    repeats: int
    """Rounds: how many timed samples each case gets."""
    target_seconds: float
    """How long one sample should take; sets the loop count per case."""
    seed: int = 0
    min_number: int = 1
    """Least loop count of one sample, whatever the calibration says (e.g. 2,000 calls)."""
    clock: str = "cpu"
    """``cpu``: the process's CPU time (all its threads), which other processes on a
    shared machine barely move; ``wall``: ``time.perf_counter``."""

    @classmethod
    def full(cls) -> Settings:
        return cls(repeats=31, target_seconds=0.02)

    @classmethod
    def quick(cls) -> Settings:
        return cls(repeats=5, target_seconds=0.004)

    def describe(self) -> str:
        least = f", at least {self.min_number:,} operations per loop" if self.min_number > 1 else ""
        least += ", CPU time" if self.clock == "cpu" else ", wall time"
        return (
            f"{self.repeats} rounds, timed loops of about {self.target_seconds * 1000:g} ms{least}"
        )


@dataclass
class Result:
    case: Case
    number: int
    """Loop count of one sample."""
    samples_ns: list[float] = field(default_factory=list)
    """ns per operation (per unit when the case has ``per``), one per round."""
    extra: dict[str, float] = field(default_factory=dict)
    """Figures a suite reports beside the timing (memory, totals); see ``Suite.columns``."""
    rounds: bool = False
    """Whether sample ``i`` was taken in round ``i`` together with every other case of
    the run (as :func:`run` does), so samples of one round can be compared pairwise."""

    @property
    def median_ns(self) -> float:
        return statistics.median(self.samples_ns)

    @property
    def iqr_ns(self) -> float:
        if len(self.samples_ns) < 2:
            return 0.0
        q1, _, q3 = statistics.quantiles(self.samples_ns, n=4, method="inclusive")
        return q3 - q1


@dataclass(frozen=True)
class Row:
    """A result with its ratio to the anchor of its scenario."""

    result: Result
    ratio: float

    @property
    def case(self) -> Case:
        return self.result.case


_TEMPLATE = """\
{kind}def _bench(_n, _ns, _start, _stop):
{bind}
    _t0 = _start()
    for _ in range(_n):
{stmt}
    return _stop(_t0)
"""

Loop = Callable[[int, Callable[[], Any], Callable[[Any], Any]], Any]
"""``loop(n, start, stop)``: ``stop(start())`` around ``n`` runs of a case's statement."""


def compile_loop(
    case: Case, names: Mapping[str, Any], loop: asyncio.AbstractEventLoop, kind: str = "bench"
) -> Loop:
    """``case``'s statement in a generated ``for _ in range(n)`` with every name bound as a
    local, between ``start()`` and ``stop(<what start returned>)``; run in ``loop`` when
    the case is async. The timed loops and the instruction counts run this same loop."""
    bind = "\n".join(f"    {name} = _ns[{name!r}]" for name in names if name.isidentifier())
    body = textwrap.indent(textwrap.dedent(case.stmt).strip(), " " * 8)
    source = _TEMPLATE.format(
        kind="async " if case.is_async else "", bind=bind or "    pass", stmt=body
    )
    module: dict[str, Any] = {}
    exec(compile(source, f"<{kind} {case.scenario}: {case.name}>", "exec"), module)
    bench = module["_bench"]

    def run(n: int, start: Callable[[], Any], stop: Callable[[Any], Any]) -> Any:
        done = bench(n, names, start, stop)
        return loop.run_until_complete(done) if case.is_async else done

    return run


def prepare(case: Case, loop: asyncio.AbstractEventLoop) -> dict[str, Any]:
    """The names ``case.setup()`` returns, awaited in ``loop`` when awaitable."""
    made = case.setup()
    if inspect.isawaitable(made):
        made = loop.run_until_complete(_awaited(made))
    return dict(made)


def finish(
    cases: Sequence[Case], names: Sequence[Mapping[str, Any]], loop: asyncio.AbstractEventLoop
) -> None:
    """Each case's teardown with its names (awaited when awaitable)."""
    for case, made in zip(cases, names, strict=False):
        if case.teardown is not None:
            done = case.teardown(made)
            if inspect.isawaitable(done):
                loop.run_until_complete(_awaited(done))


async def _awaited(value: Awaitable[T]) -> T:
    return await value


async def held(
    context: AbstractAsyncContextManager[T],
) -> tuple[T, Callable[[], Awaitable[None]]]:
    """Enter ``context`` in a task of its own and leave it open; its value and its closer.

    anyio's cancel scopes (a client's task group, an app's lifespan) must be left in the
    task that entered them, and the harness runs setup, every timed loop and teardown as
    separate tasks; so one owner task enters the context and waits to be told to leave.
    """
    ready, leave = asyncio.Event(), asyncio.Event()
    box: list[T] = []

    async def owner() -> None:
        async with context as value:
            box.append(value)
            ready.set()
            await leave.wait()

    task = asyncio.create_task(owner())
    waiter = asyncio.create_task(ready.wait())
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    if not ready.is_set():
        waiter.cancel()
        task.result()  # raises what went wrong
        raise RuntimeError("the context's owner task ended before it was entered")

    async def close() -> None:
        leave.set()
        await task

    return box[0], close


CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}


def timer(
    case: Case, names: Mapping[str, Any], loop: asyncio.AbstractEventLoop, clock: str
) -> Timer:
    """Seconds of ``clock`` that ``n`` runs of ``case`` take."""
    run, read = compile_loop(case, names, loop), CLOCKS[clock]
    return lambda n: float(run(n, read, lambda started: read() - started))


@contextlib.contextmanager
def collector(on: bool) -> Iterator[None]:
    """The garbage collector on or off for the ``with`` body, as it was after."""
    enabled = gc.isenabled()
    (gc.enable if on else gc.disable)()
    try:
        yield
    finally:
        (gc.enable if enabled else gc.disable)()


def _timed(timer: Timer, n: int) -> float:
    """One sample, garbage collector off (as ``timeit`` does)."""
    gc.collect()
    with collector(False):
        return timer(n)


def _next_count(n: int) -> int:
    """The next loop count after ``n`` in 1, 2, 5, 10, 20, 50, ..."""
    number = 1
    while True:
        for step in (1, 2, 5):
            if number * step > n:
                return number * step
        number *= 10


def _calibrate(timer: Timer, target: float, least: int = 1) -> int:
    """The smallest loop count in 1, 2, 5, 10, 20, ... whose sample takes ``target``.

    Starts at ``least`` (so never returns less).
    """
    n = max(1, least)
    while _timed(timer, n) < target:
        n = _next_count(n)
    return n


def run(
    cases: Sequence[Case],
    settings: Settings,
    *,
    progress: Callable[[str], None] | None = None,
) -> list[Result]:
    """Time every case ``settings.repeats`` times, interleaved round by round."""
    loop = asyncio.new_event_loop()
    namespaces: list[dict[str, Any]] = []
    try:
        for case in cases:
            namespaces.append(prepare(case, loop))
        timers = [
            timer(case, names, loop, settings.clock)
            for case, names in zip(cases, namespaces, strict=True)
        ]
        # Everything set up so far lives until the end: move it out of the collector's
        # sight, so the gc.collect() before each sample only scans what samples made.
        gc.collect()
        gc.freeze()
        results = []
        for case, timed in zip(cases, timers, strict=True):
            timed(1)  # first use: compile plans, create singletons
            number = _calibrate(timed, settings.target_seconds, settings.min_number)
            results.append(Result(case, number, rounds=True))
        if progress:
            progress(f"calibrated {len(cases)} cases; timing {settings.repeats} rounds")
        order = list(range(len(cases)))
        shuffle = random.Random(settings.seed).shuffle
        for _ in range(settings.repeats):
            shuffle(order)
            for index in order:
                result = results[index]
                seconds = _timed(timers[index], result.number)
                result.samples_ns.append(seconds * 1e9 / (result.number * result.case.per))
        return results
    finally:
        gc.unfreeze()
        try:
            finish(cases, namespaces, loop)
        finally:
            loop.close()


def ratio(result: Result, anchor: Result) -> float:
    """``result`` over ``anchor``: the median of round-by-round ratios when both were
    timed in the same rounds (a slow stretch of the machine moves both samples of a
    round), else the ratio of the medians."""
    if result.rounds and anchor.rounds and len(result.samples_ns) == len(anchor.samples_ns):
        return statistics.median(
            mine / theirs for mine, theirs in zip(result.samples_ns, anchor.samples_ns, strict=True)
        )
    return result.median_ns / anchor.median_ns


def with_ratios(results: Iterable[Result]) -> dict[str, list[Row]]:
    """Rows grouped by scenario, each divided by its scenario's anchor (see :func:`ratio`)."""
    grouped: dict[str, list[Result]] = {}
    for result in results:
        grouped.setdefault(result.case.scenario, []).append(result)
    table: dict[str, list[Row]] = {}
    for scenario, members in grouped.items():
        anchors = [r for r in members if r.case.anchor]
        if len(anchors) != 1:
            raise ValueError(f"scenario {scenario!r} needs exactly one anchor, has {len(anchors)}")
        table[scenario] = [Row(r, ratio(r, anchors[0])) for r in members]
    return table
