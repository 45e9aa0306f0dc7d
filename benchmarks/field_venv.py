"""Contenders that do not belong in this project's lock, run in a venv of their own.

FastMCP (with ``Depends``) and dishka-fastmcp bring a large dependency tree of
their own, and FastMCP's ``mcp`` requirement has not always matched this
project's pin. So the runner makes ``.bench-venvs/field`` (git-ignored) with
``uv venv`` + ``uv pip install`` of pinned versions, then runs
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
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks.harness import Case, Result, Settings
from benchmarks.suite import Measured, RunOptions

ROOT = Path(__file__).resolve().parent.parent
VENV_DIR = ".bench-venvs/field"
VENV = ROOT / VENV_DIR
STAMP = VENV / "bench-pins.txt"

FIELD_PINS = ("fastmcp==4.2.3", "dishka-fastmcp==3.3.1", "dishka==1.10.1")
"""The contenders, pinned; the newest releases when this suite was written."""
SHARED = ("mcp", "mcp-types", "pydantic", "pydantic-core", "anyio")
"""Pinned to the versions installed in this environment, so both floors match."""
VENV_LABEL = "FastMCP 4.2.3, dishka-fastmcp 3.3.1"

TIMEOUT_SECONDS = 900


def pins() -> list[str]:
    shared = []
    for name in SHARED:
        try:
            shared.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            continue
    return [*FIELD_PINS, *shared]


def _uv() -> list[str]:
    found = os.environ.get("UV") or shutil.which("uv")
    return [found] if found else [sys.executable, "-m", "uv"]


def _python() -> Path:
    return VENV / "bin" / "python"


def ready() -> bool:
    """The venv exists and was installed with the current pins."""
    return _python().exists() and STAMP.exists() and STAMP.read_text().split() == pins()


def ensure(progress: Any) -> None:
    """Create ``.bench-venvs/field`` if needed and install the pins into it."""
    if ready():
        return
    base = getattr(sys, "_base_executable", sys.executable)
    if not _python().exists():
        progress(f"creating {VENV_DIR} with uv venv")
        subprocess.run(
            [*_uv(), "venv", "--quiet", "--python", base, str(VENV)],
            check=True,
            cwd=ROOT,
        )
    wanted = pins()
    progress(f"installing {' '.join(wanted)} into {VENV_DIR}")
    subprocess.run(
        [*_uv(), "pip", "install", "--quiet", "--python", str(_python()), *wanted],
        check=True,
        cwd=ROOT,
    )
    STAMP.write_text("\n".join(wanted) + "\n")


def _run(settings: Settings, progress: Any) -> dict[str, Any]:
    env = dict(os.environ)
    for name in ("VIRTUAL_ENV", "PYTHONHOME", "UV_PROJECT_ENVIRONMENT"):
        env.pop(name, None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "src")])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    progress(f"running benchmarks.field_bench in {VENV_DIR}")
    done = subprocess.run(
        [
            str(_python()),
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
    if options.venvs is None and not ready():
        return Measured(
            notes=(
                f"Field rows skipped: `--quick` does not create `{VENV_DIR}`; run once "
                "without `--quick` (or with `--venvs`) to make it.",
            )
        )
    try:
        if options.venvs:
            ensure(options.progress)
        answer = _run(options.settings, options.progress)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        options.progress(f"field venv failed: {exc}")
        return Measured(notes=(f"Field rows missing: the field venv failed ({exc}).",))
    versions = [f"field venv: {answer['versions']}"]
    notes = [str(note) for note in answer.get("notes", ())]
    return Measured(_results(answer["results"]), notes, versions)
