"""A virtual environment of pinned packages, for contenders outside this project's lock.

FastMCP and dishka-fastmcp bring dependency trees of their own that do not
belong in this project's lock. Each benchmark that runs them declares a
:class:`PinnedVenv`: a git-ignored directory under ``.bench-venvs/`` made with
``uv venv`` + ``uv pip install`` of pinned versions, a stamp file recording what
was installed (so changed pins install again), and the SDK and its neighbours
pinned to the versions installed here, so both sides run the same SDK code.
Used by :mod:`benchmarks.field_venv` and :mod:`benchmarks.http_venv`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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

    def env(self, pythonpath: Sequence[Path]) -> dict[str, str]:
        """This process's environment for the venv's python, importing from ``pythonpath``."""
        env = dict(os.environ)
        for name in ("VIRTUAL_ENV", "PYTHONHOME", "UV_PROJECT_ENVIRONMENT"):
            env.pop(name, None)
        env["PYTHONPATH"] = os.pathsep.join(map(str, pythonpath))
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        return env


def uv_command() -> list[str]:
    found = os.environ.get("UV") or shutil.which("uv")
    return [found] if found else [sys.executable, "-m", "uv"]
