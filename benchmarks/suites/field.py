"""The per-call suite's field rows: FastMCP + Depends and dishka-fastmcp, in a venv of their own.

FastMCP (with ``Depends``) and dishka-fastmcp bring a large dependency tree of
their own, and FastMCP's ``mcp`` requirement has not always matched this
project's pin. So the runner makes ``.bench-venvs/field`` (git-ignored) with
``uv venv`` + ``uv pip install`` of pinned versions
(:class:`benchmarks.harness.venv.PinnedVenv`), then runs
``python -m benchmarks.suites.field --settings JSON`` there (:func:`main`): the
same harness, the same workload module, a floor of its own on that venv's ``mcp``,
and this adapter too when that ``mcp`` is the one this project pins (``src/`` on
``sys.path``). It prints JSON samples that come back here (:func:`measure`) as the
``field-*`` scenarios.

The SDK, pydantic and anyio in the venv are pinned to the versions installed
here, so the two floors run the same SDK code; the pins of the field
packages themselves are below.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, replace
from importlib import metadata
from typing import Any

from benchmarks.harness import timing
from benchmarks.harness.suite import Measured, RunOptions, progress
from benchmarks.harness.timing import Case, Result, Settings
from benchmarks.harness.venv import ROOT, PinnedVenv
from benchmarks.workloads.mcp import (
    CALL,
    LEGACY,
    MODERN,
    MODES,
    check_server,
    connected,
    disconnect,
    floor_server,
    mcpserver_resolve,
)

VENV_DIR = ".bench-venvs/field"

FIELD_PINS = ("fastmcp==4.2.3", "dishka-fastmcp==3.3.1", "dishka==1.10.1")
"""The contenders, pinned; the newest releases when this suite was written."""
SHARED = ("mcp", "mcp-types", "pydantic", "pydantic-core", "anyio")
"""Pinned to the versions installed in this environment, so both floors match."""
VENV_LABEL = "FastMCP 4.2.3, dishka-fastmcp 3.3.1"
VENV = PinnedVenv(VENV_DIR, FIELD_PINS, SHARED)

TIMEOUT_SECONDS = 900
FIELD_ROUNDS = 5
"""Rounds of the field rows, fewer than the main rows' (11): FastMCP's calls take several
times the floor's, and with the main suite's rounds a loaded machine ran them past the
timeout, which left their rows out of the whole run."""
FIELD_CALLS = 300
"""Calls per timed loop of the field rows (the main rows: 1,000)."""


def bounded(settings: Settings) -> Settings:
    """The field rows' settings: the run's, with at most :data:`FIELD_ROUNDS` rounds of at
    most :data:`FIELD_CALLS` calls, so they finish well inside :data:`TIMEOUT_SECONDS`."""
    return replace(
        settings,
        repeats=min(settings.repeats, FIELD_ROUNDS),
        min_number=min(settings.min_number, FIELD_CALLS),
    )


def _run(settings: Settings, progress: Callable[[str], None]) -> dict[str, Any]:
    settings = bounded(settings)
    progress(f"running benchmarks.suites.field in {VENV_DIR}: {settings.describe()}")
    done = subprocess.run(
        [
            str(VENV.python),
            "-m",
            "benchmarks.suites.field",
            "--settings",
            json.dumps(asdict(settings)),
        ],
        cwd=ROOT,
        env=VENV.env(ROOT, ROOT / "src"),
        stdout=subprocess.PIPE,
        text=True,
        check=True,
        timeout=TIMEOUT_SECONDS,
    )
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def _results(rows: list[dict[str, Any]]) -> list[Result]:
    results = []
    for item in rows:
        case = Case(
            scenario=item["scenario"],
            name=item["name"],
            stmt=CALL,
            setup=dict,
            is_async=True,
            anchor=item["anchor"],
            note=item["note"],
            tag=item["tag"],
        )
        results.append(Result(case, item["number"], list(item["samples_ns"]), rounds=True))
    return results


def measure(options: RunOptions) -> Measured:
    """The field rows, or a note saying why there are none."""
    unusable = VENV.unusable(options.venvs, options.progress)
    if unusable:
        return Measured(notes=(f"Field rows {unusable}.",))
    try:
        answer = _run(options.settings, options.progress)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        options.progress(f"the field run failed: {exc}")
        return Measured(notes=(f"Field rows missing: the field run failed ({exc}).",))
    versions = [f"field venv: {answer['versions']}"]
    notes = [
        f"Field rows: {bounded(options.settings).describe()} (fewer than the main rows, "
        f"so they finish within the field run's {TIMEOUT_SECONDS // 60} minutes on a "
        "loaded machine).",
        *(str(note) for note in answer.get("notes", ())),
    ]
    return Measured(_results(answer["results"]), notes, versions)


# -- inside the venv -------------------------------------------------------------------

SCENARIO = {MODERN: "field-modern", LEGACY: "field-legacy"}
PROJECT_MCP = "2.3.0"
"""The ``mcp`` this project pins: this adapter runs in the venv only on that version."""


def contenders() -> tuple[list[tuple[str, str, Callable[[], Any], str]], list[str]]:
    """``(name, tag, make server, note)`` per contender in the venv, and notes."""
    from benchmarks.workloads.fastmcp import dishka_fastmcp, fastmcp_depends

    found: list[tuple[str, str, Callable[[], Any], str]] = [
        (
            "low-level Server, hand-written (field floor)",
            "floor",
            floor_server,
            "this venv's mcp; same code as the main floor",
        )
    ]
    notes = []
    version = metadata.version("mcp")
    if version != PROJECT_MCP:
        notes.append(f"this adapter is not run in the field venv: its mcp is {version}")
    else:
        from benchmarks.workloads.adapter import SERVERS

        found.append(
            (
                "this adapter (singleton by constructor, scoped by handle())",
                "ours-constructor",
                SERVERS["ours-constructor"],
                "src/ on sys.path",
            )
        )
    found += [
        ("MCPServer + Resolve", "resolve", mcpserver_resolve, "async resolvers"),
        (
            "FastMCP + Depends",
            "fastmcp-depends",
            lambda: fastmcp_depends()._mcp_server,
            "async `Depends` factories",
        ),
        (
            "dishka-fastmcp",
            "dishka-fastmcp",
            lambda: dishka_fastmcp()._mcp_server,
            "`@inject`, `FromDishka`; Clock APP, Ledger REQUEST",
        ),
    ]
    return found, notes


def main() -> int:
    """In the venv: verify and time the contenders, print the samples as JSON."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.suites.field")
    parser.add_argument("--settings", required=True, help="harness.Settings as JSON")
    settings = Settings(**json.loads(parser.parse_args().settings))
    found, notes = contenders()

    say = progress("mcp_call: field venv")

    async def check() -> None:
        for name, _, make, _ in found:
            await check_server(make(), name)

    say("verifying contenders")
    asyncio.run(check())
    cases = [
        Case(
            SCENARIO[mode],
            name,
            CALL,
            connected(make, mode),
            is_async=True,
            anchor=tag == "floor",
            note=note,
            tag=tag,
            teardown=disconnect,
        )
        for mode in MODES
        for name, tag, make, note in found
    ]
    say(f"{len(cases)} cases; {settings.describe()}")
    results = timing.run(cases, settings, progress=say)
    packages = ("mcp", "pydantic", "fastmcp", "dishka", "dishka-fastmcp", "uncalled-for")
    versions = ", ".join(f"{name} {metadata.version(name)}" for name in packages)
    python = ".".join(str(part) for part in sys.version_info[:3])
    rows = [
        {
            "scenario": r.case.scenario,
            "name": r.case.name,
            "tag": r.case.tag,
            "anchor": r.case.anchor,
            "note": r.case.note,
            "number": r.number,
            "samples_ns": r.samples_ns,
        }
        for r in results
    ]
    print(json.dumps({"versions": f"Python {python}, {versions}", "notes": notes, "results": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
