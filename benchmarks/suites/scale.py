"""Scale: compile time, memory and ``tools/list`` latency for servers of many tools.

Servers of 10, 100, 1,000 and 10,000 generated tool classes
(:mod:`benchmarks.workloads.scale`), once without and once with a visibility hook.

- **compile**: ``compile_server`` on a fresh container with the contract cache
  emptied first (a cold start), timed with the garbage collector on, as at a
  real start-up, and again with it off; reported per tool. Each size runs in a
  process of its own that holds only that server's tool classes. Memory: what
  ``compile_server`` and then ``build_sdk_server`` leave allocated
  (``tracemalloc``), per tool.
- **tools/list**: through ``mcp.Client`` (2026-07-28, the client's response
  cache bypassed): the first page, and every page of a full listing (cursor
  walk) reported per page. Pages hold 100 tools.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import mcp

from benchmarks.harness.suite import Column, Measured, RunOptions, Suite, Table, Target, find
from benchmarks.harness.timing import CLOCKS, Case, Result, Row, Settings, ratio
from benchmarks.harness.venv import ROOT
from benchmarks.workloads.mcp import MODERN, connected, disconnect
from benchmarks.workloads.scale import (
    PAGE,
    HookCalls,
    compile_seconds,
    retained_bytes,
    serve,
    server,
)

SIZES = (10, 100, 1_000, 10_000)
QUICK_SIZES = (10, 100, 250)
"""A smoke run: 250 tools still make three pages."""
ANCHOR_SIZE = 100
WARM_UP_SIZE = 2

COMPILE = "compile"
LISTING = "list"

COMPILE_LIMIT_SECONDS = 1.0
"""Issue 8: compiling 1,000 tools under 1 s."""
FLAT = 1.25
"""A page of a big server may cost at most this much more than the 100-tool server's page."""

FIRST = "await client.list_tools(cache_mode='bypass')"
WALK = """
cursor = None
while True:
    page = await client.list_tools(cursor=cursor, cache_mode="bypass")
    cursor = page.next_cursor
    if cursor is None:
        break
"""


def compile_figures(size: int, repeats: int, clock: str = "cpu") -> dict[str, Any]:
    """Cold compiles of both variants, interleaved, GC on and off; memory once each.

    Runs in a process of its own (``python -m benchmarks.suites.scale CLOCK REPEATS SIZE``)
    that holds only this size's tool classes, as a server of that size would.
    """
    for hooks in (False, True):  # warm-up: imports and pydantic's lazily built parts
        compile_seconds(server(WARM_UP_SIZE, hooks), on=True)
    started = time.perf_counter()
    declarations = {hooks: server(size, hooks) for hooks in (False, True)}
    made = time.perf_counter() - started
    samples: dict[str, list[float]] = {}
    for _ in range(repeats):
        for hooks, declaration in declarations.items():
            for on in (True, False):
                seconds = compile_seconds(declaration, on=on, clock=CLOCKS[clock])
                key = f"{hooks}-{on}"
                samples.setdefault(key, []).append(seconds)
    memory = {str(hooks): retained_bytes(d) for hooks, d in declarations.items()}
    return {"size": size, "made_s": made, "samples": samples, "memory": memory}


def _compile_in_subprocess(sizes: Sequence[int], repeats: int, clock: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.suites.scale", clock, str(repeats), *map(str, sizes)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    )
    answer: list[dict[str, Any]] = json.loads(done.stdout)
    return answer


def _label(size: int, hooks: bool) -> str:
    return f"{size:,} tools" + (", visibility hook" if hooks else "")


def _tag(kind: str, size: int, hooks: bool) -> str:
    return f"{kind}-{size}" + ("-hook" if hooks else "")


def _figures(options: RunOptions) -> list[dict[str, Any]]:
    """Full runs: one process per size; ``--quick``: one process for all its sizes."""
    if options.quick:
        options.progress(f"sizes {', '.join(map(str, QUICK_SIZES))}: 1 cold compile each")
        return _compile_in_subprocess(QUICK_SIZES, 1, options.settings.clock)
    found = []
    for size in SIZES:
        repeats = 1 if size >= 10_000 else 7
        options.progress(f"{size:,} tools: {repeats} cold compiles per variant, own process")
        found += _compile_in_subprocess((size,), repeats, options.settings.clock)
        options.progress(f"{size:,} tools: models made in {found[-1]['made_s']:.1f} s (not timed)")
    return found


def measure(options: RunOptions) -> Measured:
    """Cold compiles per size and variant (GC on and off) and memory per tool."""
    results = []
    for figures in _figures(options):
        size = figures["size"]
        for hooks in (False, True):
            with_gc = figures["samples"][f"{hooks}-True"]
            without_gc = figures["samples"][f"{hooks}-False"]
            compiled, served = figures["memory"][str(hooks)]
            case = Case(
                COMPILE,
                _label(size, hooks),
                "compile_server(server, Container())",
                dict,
                anchor=size == ANCHOR_SIZE and not hooks,
                tag=_tag(COMPILE, size, hooks),
            )
            results.append(
                Result(
                    case,
                    1,
                    [seconds * 1e9 / size for seconds in with_gc],
                    extra={
                        "size": size,
                        "total_s": statistics.median(with_gc),
                        "total_nogc_s": statistics.median(without_gc),
                        "compile_bytes": compiled / size,
                        "serve_bytes": served / size,
                    },
                )
            )
    return Measured(results)


# -- tools/list cases -------------------------------------------------------------------


def pages(size: int) -> int:
    return max(1, -(-size // PAGE))


def cases(options: RunOptions | None = None) -> list[Case]:
    sizes = QUICK_SIZES if options is not None and options.quick else SIZES
    found = []
    for hooks in (False, True):
        for size in sizes:
            found.append(
                Case(
                    LISTING,
                    f"{_label(size, hooks)}: first page",
                    FIRST,
                    connected(functools.partial(serve, size, hooks), MODERN),
                    is_async=True,
                    anchor=size == ANCHOR_SIZE and not hooks,
                    tag=_tag("first", size, hooks),
                    teardown=disconnect,
                )
            )
        for size in sizes:
            if pages(size) > 1:
                found.append(
                    Case(
                        LISTING,
                        f"{_label(size, hooks)}: full listing, per page",
                        WALK,
                        connected(functools.partial(serve, size, hooks), MODERN),
                        is_async=True,
                        tag=_tag("walk", size, hooks),
                        note=f"{pages(size)} pages per listing",
                        per=pages(size),
                        teardown=disconnect,
                    )
                )
    return found


# -- verification -------------------------------------------------------------------------


def verify(options: RunOptions | None = None) -> None:
    """Generated servers list every tool once, in pages of 100, with their own schemas."""

    async def check(size: int, hooks: bool) -> None:
        sdk = serve(size, hooks)
        calls = HookCalls.count
        async with mcp.Client(sdk, mode=MODERN) as client:
            names: list[str] = []
            cursor = None
            while True:
                page = await client.list_tools(cursor=cursor, cache_mode="bypass")
                if len(page.tools) > PAGE:
                    raise AssertionError(f"a page of {len(page.tools)} tools")
                names += [tool.name for tool in page.tools]
                cursor = page.next_cursor
                if cursor is None:
                    break
            if names != [f"scale-{i}" for i in range(size)]:
                raise AssertionError(f"{_label(size, hooks)}: listed {len(names)} tools")
            last = page.tools[-1].input_schema
            if set(last.get("properties", {})) != {"query", "limit"}:
                raise AssertionError(f"unexpected input schema {last}")
            result = await client.call_tool("scale-1", {"query": "x"})
            if result.is_error:
                raise AssertionError(f"scale-1 failed: {result.content}")
        hook_calls = HookCalls.count - calls
        if hooks and hook_calls < size:
            raise AssertionError(f"the visibility hook ran {hook_calls} times for {size} tools")
        if not hooks and hook_calls:
            raise AssertionError("a hook ran for a server without hooks")

    async def checks() -> None:
        for size in (10, 250):
            for hooks in (False, True):
                await check(size, hooks)

    asyncio.run(checks())


# -- targets, columns -----------------------------------------------------------------------


def targets(table: Table) -> list[Target]:
    found = []
    for hooks in (False, True):
        compiled = find(table, COMPILE, _tag(COMPILE, 1_000, hooks))
        if compiled is not None:
            total = compiled.result.extra["total_s"]
            found.append(
                Target(
                    f"compile 1,000 tools{' with a hook' if hooks else ''} under "
                    f"{COMPILE_LIMIT_SECONDS:g} s (GC on)",
                    total < COMPILE_LIMIT_SECONDS,
                    f"{total:.2f} s (GC off: {compiled.result.extra['total_nogc_s']:.2f} s)",
                )
            )
    for hooks in (False, True):
        base = find(table, LISTING, _tag("first", ANCHOR_SIZE, hooks))
        if base is None:
            continue
        rows = [
            r
            for kind in ("first", "walk")
            for size in sorted({*SIZES, *QUICK_SIZES})
            if size > ANCHOR_SIZE and (r := find(table, LISTING, _tag(kind, size, hooks)))
        ]
        if not rows:
            continue
        worst = max(rows, key=lambda r: ratio(r.result, base.result))
        worst_size = max(int(r.case.tag.split("-")[1]) for r in rows)
        spread = ratio(worst.result, base.result)
        found.append(
            Target(
                f"tools/list{' with a hook' if hooks else ''}: a 100-tool page of a bigger "
                f"server (up to {worst_size:,} tools) <= {FLAT}x the 100-tool server's page"
                + (" (with a hook too)" if hooks else ""),
                spread <= FLAT,
                f"worst {spread:.2f}x ({worst.case.name})",
            )
        )
        small = find(table, LISTING, _tag("first", 10, hooks))
        if small is not None:
            share = ratio(small.result, base.result)
            found.append(
                Target(
                    f"tools/list{' with a hook' if hooks else ''}: a 10-tool page costs less "
                    "than a 100-tool page (cost follows page size)",
                    share < 1.0,
                    f"{share:.2f}x",
                )
            )
    return found


def _kib(key: str) -> Callable[[Row], str]:
    return lambda r: f"{r.result.extra[key] / 1024:,.1f}"


def _seconds(key: str) -> Callable[[Row], str]:
    return lambda r: f"{r.result.extra[key] * 1000:,.0f}"


def _listed(r: Row) -> str:
    tools = r.case.tag.split("-")[1]
    return f"{min(int(tools), PAGE)}"


def _per_tool(r: Row) -> str:
    tools = min(int(r.case.tag.split("-")[1]), PAGE)
    return f"{r.result.median_ns / tools / 1000:,.1f}"


def tune(settings: Settings, quick: bool) -> Settings:
    if quick:
        return dataclasses.replace(settings, repeats=3)
    return dataclasses.replace(settings, repeats=15)


COLUMNS: Mapping[str, Sequence[Column]] = {
    COMPILE: (
        Column("total ms (GC on)", _seconds("total_s")),
        Column("total ms (GC off)", _seconds("total_nogc_s")),
        Column("KiB/tool compiled", _kib("compile_bytes")),
        Column("KiB/tool served", _kib("serve_bytes")),
    ),
    LISTING: (
        Column("tools on the page", _listed),
        Column("µs per listed tool", _per_tool),
    ),
}

SUITE = Suite(
    name="scale",
    title="Scale: compile time, memory and tools/list for many tools",
    scenarios={
        COMPILE: "Cold compile_server, per tool (GC on), and memory per tool",
        LISTING: "tools/list through mcp.Client (2026-07-28), per page of up to 100 tools",
    },
    cases=cases,
    verify=verify,
    targets=targets,
    packages=("mcp-adapter-di", "mcp", "pydantic"),
    limits={LISTING: FLAT},
    tune=tune,
    measure=measure,
    units={COMPILE: "us", LISTING: "us"},
    ratio_titles={COMPILE: "x 100 tools", LISTING: "x 100-tool page"},
    columns=COLUMNS,
    notes=(
        "Tools are generated with `type(name, (Tool,), {...})`, each with its own input "
        "contract from `pydantic.create_model(__base__=Schema)` (a described `query: str` "
        "and a bounded `limit: int = 10`) and a shared `async def handle(self, payload)`; "
        "the hook variant adds `def shouldRegister(self) -> bool: return True`. Making "
        "the models is not timed.",
        "Compile rows: one sample per cold compile (fresh `Container`, `Contract.of` cache "
        "emptied), 7 per variant (1 at 10,000 tools and with `--quick`), GC on, in a process "
        "per size (one for all sizes with `--quick`) that holds only that server's classes "
        "and first compiled a 2-tool server (imports, pydantic's lazily built parts); "
        "variants and GC on/off alternate. The "
        "ratio is per tool against the 100-tool server, so 1.00x means linear growth. Memory: "
        "`tracemalloc` around `compile_server` (catalog, contracts, schemas, plans, "
        "builders) and then `build_sdk_server` (pages, handlers), after `gc.collect()`.",
        "tools/list rows: the first page, and a full cursor walk divided by its number of "
        "pages; each server is compiled once and each row has its own client. The client "
        "absorbs every listed tool too (output-schema cache, `Mcp-Param` header maps), "
        "so a row is the server's and the SDK's work together.",
    ),
)


def main(argv: Sequence[str]) -> int:
    """``python -m benchmarks.suites.scale CLOCK REPEATS SIZE [SIZE ...]``: compile figures."""
    clock, *numbers = argv
    repeats, *sizes = (int(value) for value in numbers)
    print(json.dumps([compile_figures(size, repeats, clock) for size in sizes]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
