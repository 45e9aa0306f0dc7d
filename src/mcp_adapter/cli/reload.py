"""``serve --reload``: uvicorn's polling reloader, watching a project's own files only.

uvicorn's ``StatReload`` looks at the modification time of every ``.py`` file
under the folders it watches, four times a second, and restarts the worker
process when one changes. Under a project folder that would include its
virtual environment (``.venv``: thousands of files); this one skips hidden
folders, virtual environments (a folder with ``pyvenv.cfg``),
``__pycache__``, ``node_modules``, ``build``, ``dist`` and ``site-packages``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from uvicorn.supervisors.statreload import StatReload

SKIPPED = frozenset({"__pycache__", "node_modules", "build", "dist", "site-packages"})


def skipped(folder: Path) -> bool:
    """Whether the reloader leaves ``folder`` (and what is under it) alone."""
    return (
        folder.name.startswith(".") or folder.name in SKIPPED or (folder / "pyvenv.cfg").is_file()
    )


def watched_files(roots: list[Path]) -> Iterator[Path]:
    """Every ``.py`` file under ``roots``, outside the skipped folders."""
    for root in roots:
        for folder, folders, files in os.walk(root):
            folders[:] = [name for name in folders if not skipped(Path(folder, name))]
            for name in files:
                if name.endswith(".py"):
                    yield Path(folder, name).resolve()


class ProjectReload(StatReload):
    """``StatReload`` over :func:`watched_files` of the config's ``reload_dirs``."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.reloader_name = "--reload"

    def iter_py_files(self) -> Iterator[Path]:
        return watched_files(list(self.config.reload_dirs))
