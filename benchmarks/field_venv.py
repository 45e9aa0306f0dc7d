"""Contenders that do not belong in this project's lock, run in a venv of their own.

FastMCP (with ``Depends``) and dishka-fastmcp bring a large dependency tree of
their own, and FastMCP's ``mcp`` requirement has not always matched this
project's pin. So the runner makes ``.bench-venvs/field`` (git-ignored) with
``uv venv`` + ``uv pip install`` of pinned versions
(:class:`benchmarks.pinned_venv.PinnedVenv`), then runs
``python -m benchmarks.field_bench`` there: the same harness, the same
workload module, a floor of its own on that venv's ``mcp``, and this adapter
too when that ``mcp`` is the one this project pins (``src/`` on ``sys.path``).
It prints JSON samples that come back here as the ``field-*`` scenarios.

The SDK, pydantic and anyio in the venv are pinned to the versions installed
here, so the two floors run the same SDK code; the pins of the field
packages themselves are below.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from typing import Any

from benchmarks.harness import Case, Result, Settings
from benchmarks.pinned_venv import ROOT, PinnedVenv
from benchmarks.suite import Measured, RunOptions

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


def _run(settings: Settings, progress: Any) -> dict[str, Any]:
    env = VENV.env([ROOT, ROOT / "src"])
    settings = bounded(settings)
    progress(f"running benchmarks.field_bench in {VENV_DIR}: {settings.describe()}")
    done = subprocess.run(
        [
            str(VENV.python),
            "-m",
            "benchmarks.field_bench",
            "--settings",
            json.dumps(
                {
                    "repeats": settings.repeats,
                    "target_seconds": settings.target_seconds,
                    "min_number": settings.min_number,
                    "seed": settings.seed,
                    "clock": settings.clock,
                }
            ),
        ],
        cwd=ROOT,
        env=env,
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
            stmt=item["stmt"],
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
    if options.venvs is False:
        return Measured(notes=("Field rows skipped (`--no-venvs`).",))
    if options.venvs is None and not VENV.ready():
        return Measured(
            notes=(
                f"Field rows skipped: `--quick` does not create `{VENV_DIR}`; run once "
                "without `--quick` (or with `--venvs`) to make it.",
            )
        )
    try:
        if options.venvs:
            VENV.ensure(options.progress)
        answer = _run(options.settings, options.progress)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        options.progress(f"field venv failed: {exc}")
        return Measured(notes=(f"Field rows missing: the field venv failed ({exc}).",))
    versions = [f"field venv: {answer['versions']}"]
    notes = [
        f"Field rows: {bounded(options.settings).describe()} (fewer than the main rows, "
        f"so they finish within the field run's {TIMEOUT_SECONDS // 60} minutes on a "
        "loaded machine).",
        *(str(note) for note in answer.get("notes", ())),
    ]
    return Measured(_results(answer["results"]), notes, versions)
