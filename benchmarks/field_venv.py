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


def _run(settings: Settings, progress: Any) -> dict[str, Any]:
    env = VENV.env([ROOT, ROOT / "src"])
    progress(f"running benchmarks.field_bench in {VENV_DIR}")
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
    notes = [str(note) for note in answer.get("notes", ())]
    return Measured(_results(answer["results"]), notes, versions)
