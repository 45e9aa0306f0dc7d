"""Names a package exports but imports only when first asked for (an optional dependency,
or one that costs start-up to every process that does not use it)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def on_first_use(
    namespace: dict[str, Any], modules: Mapping[str, Sequence[str]]
) -> Callable[[str], Any]:
    """The package's ``__getattr__``: each name ``modules`` lists under a module is
    imported from it when first asked for and kept in ``namespace`` (the package's
    ``globals()``), so later lookups find it at once; any other name is an
    ``AttributeError``."""
    package = namespace["__name__"]
    module_of = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
