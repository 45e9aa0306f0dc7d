"""Writing one generated file below a folder, never through a symbolic link.

The folder the user names (``--path``) is taken as given; below it, no folder
and no file may be a symbolic link, wherever it points (inside the folder or
out of it, dangling or not). Where the platform allows (``dir_fd``), every
folder is opened with ``O_NOFOLLOW`` relative to its parent and the file is
opened relative to its folder with ``O_NOFOLLOW`` (and ``O_EXCL`` unless
replacing), so a link swapped in after the checks is refused too.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from mcp_adapter.cli.errors import CliError

_LINK_HINT = "remove the link, or pass a --path with no links below it"
_EXISTS_HINT = "choose another name, or pass --force to replace it"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIR_FD = {os.open, os.mkdir, os.stat} <= os.supports_dir_fd and bool(_NOFOLLOW and _DIRECTORY)


def _refuse_link(path: Path) -> CliError:
    return CliError(f"{path} is a symbolic link; make:mcp-* never writes through one", _LINK_HINT)


def _lstat(name: str, shown: Path, dir_fd: int | None) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CliError(f"cannot read {shown}: {exc.strerror or exc}") from exc


def write_below(root: Path, folders: Sequence[str], name: str, text: str, *, replace: bool) -> Path:
    """Write ``text`` to ``root/folders.../name``, creating the folders; the path written.

    Refuses (``CliError``) a symbolic link as any of ``folders`` or as ``name``,
    a folder that is not a folder, and an existing ``name`` unless ``replace``.
    """
    data = text.encode("utf-8")
    if not _DIR_FD:
        return _write_by_path(root, folders, name, data, replace=replace)
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd = os.open(root, os.O_RDONLY | _DIRECTORY)
    except OSError as exc:
        raise CliError(f"cannot write to {root}: {exc.strerror or exc}") from exc
    shown = root
    try:
        for folder in folders:
            shown = shown / folder
            child = _enter(fd, folder, shown)
            os.close(fd)
            fd = child
        _write_file(fd, name, shown / name, data, replace=replace)
    finally:
        os.close(fd)
    return shown / name


def _enter(parent: int, folder: str, shown: Path) -> int:
    """Open (creating it) ``folder`` in ``parent``: the folder's fd."""
    found = _lstat(folder, shown, parent)
    if found is None:
        try:
            os.mkdir(folder, dir_fd=parent)
        except FileExistsError:
            found = _lstat(folder, shown, parent)
        except OSError as exc:
            raise CliError(f"cannot create {shown}: {exc.strerror or exc}") from exc
    if found is not None and stat.S_ISLNK(found.st_mode):
        raise _refuse_link(shown)
    if found is not None and not stat.S_ISDIR(found.st_mode):
        raise CliError(f"{shown} exists and is not a folder")
    try:
        return os.open(folder, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise _refuse_link(shown) from exc
        raise CliError(f"cannot write to {shown}: {exc.strerror or exc}") from exc


def _write_file(folder: int, name: str, shown: Path, data: bytes, *, replace: bool) -> None:
    found = _lstat(name, shown, folder)
    if found is not None and stat.S_ISLNK(found.st_mode):
        raise _refuse_link(shown)
    if found is not None and not replace:
        raise CliError(f"{shown} already exists", _EXISTS_HINT)
    if found is not None and not stat.S_ISREG(found.st_mode):
        raise CliError(f"{shown} exists and is not a file")
    flags = os.O_WRONLY | os.O_CREAT | _NOFOLLOW | _NONBLOCK
    flags |= os.O_TRUNC if replace else os.O_EXCL
    try:
        fd = os.open(name, flags, 0o644, dir_fd=folder)
    except FileExistsError as exc:
        raise CliError(f"{shown} already exists", _EXISTS_HINT) from exc
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refuse_link(shown) from exc
        raise CliError(f"cannot write {shown}: {exc.strerror or exc}") from exc
    with os.fdopen(fd, "wb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise CliError(f"{shown} exists and is not a file")
        file.write(data)


def _write_by_path(
    root: Path, folders: Sequence[str], name: str, data: bytes, *, replace: bool
) -> Path:
    """The same checks without ``dir_fd`` (Windows): by path, then an exclusive open."""
    shown = root
    for folder in folders:
        shown = shown / folder
        if shown.is_symlink():
            raise _refuse_link(shown)
        if shown.exists() and not shown.is_dir():
            raise CliError(f"{shown} exists and is not a folder")
    path = shown / name
    if path.is_symlink():
        raise _refuse_link(path)
    if path.exists() and not replace:
        raise CliError(f"{path} already exists", _EXISTS_HINT)
    try:
        shown.mkdir(parents=True, exist_ok=True)
        if path.exists():
            path.unlink()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as file:
            file.write(data)
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return path
