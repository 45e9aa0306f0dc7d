"""Finding the objects a command names as ``MODULE:ATTR`` or ``path/to/file.py:ATTR``."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from pathlib import Path
from typing import Any

from container import Container
from mcp_adapter.cli.errors import CliError
from mcp_adapter.compiled.catalog import Catalog
from mcp_adapter.declare.components import Server
from mcp_adapter.declare.request import Identity
from mcp_adapter.distribution import DISTRIBUTION, OWN_PACKAGES, MissingExtra, shadowing_files
from mcp_adapter.serving import Compilable, Servable, os_user


def ensure_cwd_importable() -> None:
    """Modules are looked up from the current directory first, as ``python -m`` does."""
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)


FORM_HINT = "for example: app.mcp.servers.demo_server:DemoServer or app/server.py:DemoServer"


def is_file_target(module_part: str) -> bool:
    """``app.py`` and ``path/to/app`` name a file; ``app.mcp.server`` names a module."""
    return module_part.endswith(".py") or "/" in module_part or os.sep in module_part


def load_object(spec: str, what: str) -> Any:
    """The object ``MODULE:ATTR`` or ``path/to/file.py:ATTR`` names (``ATTR`` may be dotted)."""
    module_part, sep, attr = spec.rpartition(":")
    if not sep or not module_part or not attr:
        raise CliError(f"{what} {spec!r} is not of the form MODULE:ATTR", FORM_HINT)
    ensure_cwd_importable()
    module_name = module_of_file(module_part) if is_file_target(module_part) else module_part
    try:
        module = importlib.import_module(module_name)
    except MissingExtra as exc:  # an extra the module needs is not installed
        raise CliError(f"importing {module_name!r} failed: {exc.message}", exc.hint) from exc
    except ModuleNotFoundError as exc:
        _refuse_shadowed(exc, module_name)
        if exc.name is not None and module_name.startswith(exc.name):
            raise CliError(
                f"cannot import module {module_name!r} for {what}",
                "run from your project's root or check the module path (no .py suffix)",
            ) from exc
        raise CliError(
            f"importing {module_name!r} failed: no module named {exc.name!r}",
            "install the missing package or fix the import in that module",
        ) from exc
    except Exception as exc:
        _refuse_shadowed(exc, module_name)
        raise CliError(
            f"importing {module_name!r} failed: {type(exc).__name__}: {exc}", traceback=True
        ) from exc
    found: Any = module
    for part in attr.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise CliError(
                f"{module_part!r} has no attribute {attr!r}",
                "check the name after the colon",
            ) from None
    return found


def module_of_file(path_text: str) -> str:
    """The module name ``path/to/app.py`` is imported as, its folder made importable.

    Under the current folder, the dotted path from it (``path.to.app``, as
    ``python -m path.to.app`` would import it, packages and relative imports
    included); elsewhere, the file's own name with its folder first on
    ``sys.path`` (as ``python path/to/app.py`` would).
    """
    path = Path(path_text if path_text.endswith(".py") else f"{path_text}.py")
    if not path.is_file():
        raise CliError(
            f"no file {path}", "file targets are paths from the current folder: app/server.py:App"
        )
    path = path.resolve()
    cwd = Path.cwd().resolve()
    parts = path.relative_to(cwd).with_suffix("").parts if path.is_relative_to(cwd) else ()
    if parts and all(part.isidentifier() for part in parts):
        name = ".".join(parts)
    else:
        name = path.stem
        if str(path.parent) not in sys.path:
            sys.path.insert(0, str(path.parent))
    loaded = sys.modules.get(name)
    if name.partition(".")[0] in (*OWN_PACKAGES, "mcp_adapter") or (
        loaded is not None and Path(getattr(loaded, "__file__", "") or "").resolve() != path
    ):
        raise CliError(
            f"{path_text} cannot be imported as the module {name!r}: that name is "
            f"{_taken_by(name, loaded)}",
            f"rename {path.name} (for example to app_{path.name})",
        )
    return name


def _taken_by(name: str, loaded: Any) -> str:
    top = name.partition(".")[0]
    if top in (*OWN_PACKAGES, "mcp_adapter"):
        return f"{DISTRIBUTION}'s package {top!r}"
    return f"the module already imported from {getattr(loaded, '__file__', None) or 'elsewhere'}"


def _refuse_shadowed(exc: BaseException, module_name: str) -> None:
    """A user module imports ``schemas`` or ``container`` meaning a file of its own, which
    this distribution's package of that name hides: say so (with the file) and stop."""
    if isinstance(exc, ImportError):
        named = (exc.name or "").partition(".")[0]
    elif isinstance(exc, AttributeError):
        named = getattr(getattr(exc, "obj", None), "__name__", "") or ""
    else:
        return
    shadowed = shadowing_files(sys.path).get(named)
    if shadowed is None:
        return
    raise CliError(
        f"importing {module_name!r} failed: it imports {named!r} meaning {shadowed}, but "
        f"{named!r} is {DISTRIBUTION}'s package: {type(exc).__name__}: {exc}",
        f"rename {shadowed} (for example to app_{shadowed.name}) and the imports of it",
    ) from exc


def _call_factory(found: Any, spec: str, what: str) -> Any:
    try:
        return found()
    except Exception as exc:
        raise CliError(
            f"calling the {what} factory {spec!r} failed: {type(exc).__name__}: {exc}",
            traceback=True,
        ) from exc


def _is_factory(found: Any) -> bool:
    return inspect.isfunction(found) or inspect.ismethod(found)


def load_servable(spec: str) -> Servable:
    """A ``Server`` class, a ``Catalog``, a ``Compilable`` or a zero-argument factory of one."""
    found = load_object(spec, "server")
    if _is_factory(found):
        found = _call_factory(found, spec, "server")
    if isinstance(found, type) and issubclass(found, Server):
        return found
    if isinstance(found, Catalog):
        return found
    if not isinstance(found, type) and isinstance(found, Compilable):
        return found
    raise CliError(
        f"{spec} is {_describe(found)}, not something to serve",
        "name a Server subclass, a Catalog, or an object with compile(container)",
    )


def load_container(spec: str | None) -> Container:
    """The ``Container`` instance or zero-argument factory ``spec`` names; empty when ``None``."""
    if spec is None:
        return Container()
    found = load_object(spec, "container")
    if _is_factory(found) or (isinstance(found, type) and not issubclass(found, Container)):
        found = _call_factory(found, spec, "container")
    if isinstance(found, type) and issubclass(found, Container):
        found = _call_factory(found, spec, "container")
    if not isinstance(found, Container):
        raise CliError(
            f"{spec} is {_describe(found)}, not a Container",
            "name a Container instance or a function returning one",
        )
    return found


def load_instance(spec: str, what: str, check: str) -> Any:
    """An object with method ``check``, named directly or by a zero-argument factory."""
    found = load_object(spec, what)
    if _is_factory(found) or isinstance(found, type):
        found = _call_factory(found, spec, what)
    if not callable(getattr(found, check, None)):
        raise CliError(
            f"{spec} is {_describe(found)}, which has no {check}() method",
            f"name a {what} instance or a function returning one",
        )
    return found


OS_USER = "os-user"
"""``--identity os-user``: the user running the server (``mcp_adapter.serving.os_user``)."""


def load_identity(spec: str) -> Identity:
    """``os-user``, or the ``Identity`` that ``MODULE:ATTR`` names or returns (called once)."""
    if spec == OS_USER:
        return os_user()
    found = load_object(spec, "identity")
    if callable(found) and not isinstance(found, Identity):
        found = _call_factory(found, spec, "identity")
    if not isinstance(found, Identity):
        raise CliError(
            f"{spec} gives {_describe(found)}, not an Identity",
            "name an Identity or a zero-argument function returning one, or say os-user",
        )
    return found


def _describe(found: Any) -> str:
    if isinstance(found, type):
        return f"the class {found.__qualname__}"
    return f"a {type(found).__qualname__}"
