"""The checkout, and the virtual environments of pinned packages made beside it.

FastMCP and dishka-fastmcp bring dependency trees of their own that do not
belong in this project's lock. A benchmark that runs them declares a
:class:`PinnedVenv`: a git-ignored directory under ``.bench-venvs/`` made with
``uv venv`` + ``uv pip install`` of pinned versions, a stamp file recording what
was installed (so changed pins install again), and the SDK and its neighbours
pinned to the versions installed here, so both sides run the same SDK code.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The checkout whose ``benchmarks`` package runs."""


def git(*args: str, check: bool = False) -> str:
    """``git`` in the checkout: its output; when it fails, '' (or the exit, with ``check``)."""
    done = subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0 and check:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip() if done.returncode == 0 else ""


def commit() -> str:
    """The commit measured, and whether ``src/`` had uncommitted changes."""
    found = git("rev-parse", "--short=12", "HEAD") or "unknown commit"
    return found + (" + uncommitted changes in src/" if git("status", "--porcelain", "src") else "")


def uv_command() -> list[str]:
    found = os.environ.get("UV") or shutil.which("uv")
    return [found] if found else [sys.executable, "-m", "uv"]


def uv_env() -> dict[str, str]:
    """This process's environment without what points ``uv`` or python at this venv."""
    env = dict(os.environ)
    for name in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", "PYTHONPATH", "PYTHONHOME"):
        env.pop(name, None)
    return env


@dataclass(frozen=True)
class PinnedVenv:
    directory: str
    """Where the venv lives, relative to the project root (``.bench-venvs/...``)."""
    own: tuple[str, ...]
    """The contenders' pins (``name==version``)."""
    shared: tuple[str, ...]
    """Packages pinned to the versions installed in this environment."""
    install_timeout: float | None = None
    """Seconds ``uv pip install`` may take; no limit when ``None``."""

    @property
    def path(self) -> Path:
        return ROOT / self.directory

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    @property
    def stamp(self) -> Path:
        return self.path / "bench-pins.txt"

    def pins(self) -> list[str]:
        shared = []
        for name in self.shared:
            try:
                shared.append(f"{name}=={metadata.version(name)}")
            except metadata.PackageNotFoundError:
                continue
        return [*self.own, *shared]

    def ready(self) -> bool:
        """The venv exists and was installed with the current pins."""
        return (
            self.python.exists()
            and self.stamp.exists()
            and self.stamp.read_text().split() == self.pins()
        )

    def ensure(self, progress: Callable[[str], None]) -> None:
        """Create the venv if needed and install the pins into it."""
        if self.ready():
            return
        if not self.python.exists():
            progress(f"creating {self.directory} with uv venv")
            base = getattr(sys, "_base_executable", sys.executable)
            subprocess.run(
                [*uv_command(), "venv", "--quiet", "--python", base, str(self.path)],
                check=True,
                cwd=ROOT,
            )
        wanted = self.pins()
        progress(f"installing {' '.join(wanted)} into {self.directory}")
        subprocess.run(
            [*uv_command(), "pip", "install", "--quiet", "--python", str(self.python), *wanted],
            check=True,
            cwd=ROOT,
            timeout=self.install_timeout,
        )
        self.stamp.write_text("\n".join(wanted) + "\n")

    def unusable(self, venvs: bool | None, progress: Callable[[str], None]) -> str:
        """Why the venv cannot be used in this run ('' when it can): ``venvs`` False skips
        it, True makes or refreshes it first, None (``--quick``) uses it only if it is there."""
        if venvs is False:
            return "skipped (`--no-venvs`)"
        try:
            if venvs:
                self.ensure(progress)
        except (OSError, subprocess.SubprocessError) as exc:
            progress(f"{self.directory} failed: {exc}")
            return f"missing: the venv failed ({exc})"
        if not self.ready():
            return (
                f"skipped: `--quick` does not create `{self.directory}`; run once without "
                "`--quick` (or with `--venvs`) to make it"
            )
        return ""

    def env(self, *pythonpath: Path) -> dict[str, str]:
        """The environment of the venv's python, importing from ``pythonpath``."""
        return {
            **uv_env(),
            "PYTHONPATH": os.pathsep.join(map(str, pythonpath)),
            "PYTHONDONTWRITEBYTECODE": "1",
        }

    def versions(self, *names: str) -> str:
        """``name version, ...`` of ``names`` as installed in the venv."""
        code = (
            "import importlib.metadata as m, sys;"
            "print(', '.join(f'{n} {m.version(n)}' for n in sys.argv[1:]))"
        )
        done = subprocess.run(
            [str(self.python), "-c", code, *names],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        return done.stdout.strip()
