"""The distribution these packages ship in, its version, its extras (the one way an
optional import says which one to install), and the check that ``container`` and
``schemas`` are its own.

``mcp-adapter-di`` installs three top-level packages side by side: ``container``,
``schemas`` and ``mcp_adapter``. Short names collide: a project's own
``schemas.py`` or ``container.py`` (common in FastAPI projects), run from its
folder, comes first on ``sys.path``; another distribution named ``schemas`` can
overwrite this one's files. Either way ``mcp_adapter`` would import the wrong
code and fail far from the cause (``cannot import name 'Contract' from
'schemas'``, a circular import, a ``SyntaxError`` in someone else's package).
:func:`require_own_packages` runs first in ``mcp_adapter/__init__.py``, before
anything imports them, and names the file in the way and the fix.

This module imports neither ``container`` nor ``schemas`` at module level (that
is the point), so it cannot use ``mcp_adapter.errors``. The name and the version come
from ``_mcp_adapter_di``, the standard-library-only module the ``mcp-adapter`` command
starts in (it answers ``--version`` without importing this package).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from _mcp_adapter_di import DISTRIBUTION as DISTRIBUTION
from _mcp_adapter_di import version as version

MARK = "__distribution__"
"""The attribute ``container`` and ``schemas`` set to :data:`DISTRIBUTION`."""
OWN_PACKAGES = ("container", "schemas")
"""The packages beside ``mcp_adapter`` that it imports."""


EXTRAS: dict[str, dict[str, str]] = {
    "testing": {"hypothesis": "hypothesis"},
    "tasks": {"docket": "pydocket", "cloudpickle": "cloudpickle"},
    "redis": {"redis": "redis"},
    "di": {"dependency_injector": "dependency-injector"},
}
"""Each extra of the distribution: the top-level modules it brings and the distribution
each comes in (``tests/packaging`` checks this against ``pyproject.toml``)."""


class HintedImportError(ImportError):
    """An ``ImportError`` (what Python raises for a module it cannot use) that says what
    to do: ``message``, then ``hint`` on a line of its own; the CLI prints the two as
    its ``error:`` and ``hint:`` lines."""

    def __init__(self, message: str, *, name: str, path: str | None = None, hint: str) -> None:
        super().__init__(f"{message}\n  hint: {hint}", name=name, path=path)
        self.message = message
        self.hint = hint


class ShadowedPackageError(HintedImportError):
    """``container`` or ``schemas`` is not this distribution's package: the file in the
    way is ``path``, the package's ``name``, the fix in ``hint``."""


class MissingExtra(HintedImportError, ModuleNotFoundError):
    """A module of one of the distribution's extras is not installed: what needs it, and
    the ``pip install`` that brings it (``hint``). ``name`` is the missing module."""

    def __init__(self, feature: str, extra: str, module: str) -> None:
        super().__init__(
            f"{feature} needs the {EXTRAS[extra][module]} package, which is not installed",
            name=module,
            hint=install_hint(extra),
        )
        self.extra = extra


def install_hint(extra: str) -> str:
    """What installs an extra: ``pip install 'mcp-adapter-di[redis]'``."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


@contextmanager
def needs_extra(extra: str, feature: str) -> Iterator[None]:
    """The imports inside the block that find no module of ``extra`` raise
    :class:`MissingExtra` for ``feature`` (a missing module of any other name is left
    as it is). Every optional import of the package goes through it: ``with
    needs_extra("redis", "--redis"): from redis.exceptions import RedisError``."""
    modules = EXTRAS[extra]
    try:
        yield
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").partition(".")[0]
        if isinstance(exc, MissingExtra) or missing not in modules:
            raise
        raise MissingExtra(feature, extra, missing) from exc


def own_folder(name: str) -> Path:
    """Where this distribution's package ``name`` lives: beside ``mcp_adapter``."""
    return Path(__file__).resolve().parent.parent / name


def require_own_packages() -> None:
    """Raise :class:`ShadowedPackageError` unless ``container`` and ``schemas`` are this
    distribution's packages; imports them when they are."""
    for name in OWN_PACKAGES:
        require_own(name)


def require_own(name: str) -> ModuleType:
    """This distribution's package ``name``, imported; a clear error when it is not."""
    module = sys.modules.get(name)
    if module is None:
        origin = _origin(name)
        expected = own_folder(name) / "__init__.py"
        if origin is None or Path(origin).resolve() != expected:
            raise _shadowed(name, origin)
        try:
            module = importlib.import_module(name)
        except Exception as exc:  # what another distribution's files do on import
            why = f"importing it fails: {type(exc).__name__}: {exc}"
            raise _overwritten(name, origin, why) from exc
    if getattr(module, MARK, None) != DISTRIBUTION:
        found = getattr(module, "__file__", None)
        if found is not None and Path(found).resolve() == own_folder(name) / "__init__.py":
            raise _overwritten(name, found, f"it does not set {MARK} = {DISTRIBUTION!r}")
        raise _shadowed(name, found)
    return module


def _origin(name: str) -> str | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    return None if spec is None else spec.origin


def _shadowed(name: str, found: str | None) -> ShadowedPackageError:
    if found is None:
        return ShadowedPackageError(
            f"{DISTRIBUTION}'s package {name!r} is missing (it belongs beside mcp_adapter "
            f"in {own_folder(name).parent})",
            name=name,
            path=None,
            hint=f"reinstall it: pip install --force-reinstall {DISTRIBUTION}",
        )
    where = Path(found)
    mine = where.parent if where.name == "__init__.py" else where
    return ShadowedPackageError(
        f"import {name!r} finds {found}, not {DISTRIBUTION}'s package {name!r} "
        f"({own_folder(name)}): a module of yours named {name!r} shadows it",
        name=name,
        path=found,
        hint=f"rename {mine} (for example to app_{name}{where.suffix if mine == where else ''}) "
        f"and the imports of it: {DISTRIBUTION} needs the top-level name {name!r}",
    )


def _overwritten(name: str, found: str, why: str) -> ShadowedPackageError:
    owner = _owner_of(name)
    by = f"the distribution {owner!r}" if owner else "another distribution"
    fix = f"pip uninstall {owner} && " if owner else ""
    return ShadowedPackageError(
        f"{found} is not {DISTRIBUTION}'s package {name!r}: {by} wrote over it ({why})",
        name=name,
        path=found,
        hint=f"{fix}pip install --force-reinstall {DISTRIBUTION} "
        "(or install the two in separate virtual environments)",
    )


def shadowing_files(paths: list[str]) -> dict[str, Path]:
    """``name -> path``: a module or package of someone else's on ``paths`` (``sys.path``
    entries; ``''`` is the current folder) named as one of this distribution's packages,
    which those packages hide once imported (a project's own ``schemas.py``)."""
    found: dict[str, Path] = {}
    for name in (*OWN_PACKAGES, "mcp_adapter"):
        mine = own_folder(name)
        for entry in paths:
            folder = Path(entry or ".").resolve()
            module, package = folder / f"{name}.py", folder / name
            if module.is_file():
                found.setdefault(name, module)
            elif (package / "__init__.py").is_file() and package.resolve() != mine:
                found.setdefault(name, package)
    return found


def _owner_of(name: str) -> str | None:
    """The other installed distribution whose files include ``name/__init__.py``."""
    wanted = f"{name}/__init__.py"
    for dist in importlib.metadata.distributions():
        owner = dist.metadata["Name"]
        if owner is None or re.sub(r"[-_.]+", "-", owner).lower() == DISTRIBUTION:
            continue
        if any(str(path).replace("\\", "/") == wanted for path in dist.files or ()):
            return str(owner)
    return None
