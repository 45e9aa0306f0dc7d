"""A scoped dependency-injection container with compiled resolution plans.

Knows nothing of MCP: usable on its own.

Besides the container itself, the root exports what an integration (an
adapter that calls handlers with injected parameters) reads signatures and
graphs with: ``parameters`` and ``Param`` (a callable's parameters, annotations
normalized to keys), ``EMPTY`` (no annotation, no default), ``type_hints`` and
``return_annotation`` (the one reader of annotations), ``AnnotationError``,
``type_name`` (names for messages), ``autowirable`` (may an unbound key be
built?), and the scope levels ``APP`` and ``LEVEL_NAMES`` (``Node.level``).
"""

from container.binding import Binding, ProviderKind
from container.container import Container
from container.errors import (
    AsyncResolutionRequired,
    ContainerError,
    ContextNotGiven,
    FinalizerError,
    Problem,
    ProblemKind,
    ResolutionError,
    ScopeError,
    ValidationError,
    render_problems,
)
from container.graph import autowirable
from container.introspect import (
    EMPTY,
    AnnotationError,
    Param,
    parameters,
    return_annotation,
    type_hints,
    type_name,
)
from container.lifetime import APP, LEVEL_NAMES, Lifetime
from container.scope import Scope, SessionScope

__distribution__ = "mcp-adapter-di"
"""The distribution this package ships in; ``mcp_adapter`` checks it to know its own."""


def __getattr__(name: str) -> str:
    """``__version__``: the installed distribution's, read when first asked for."""
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version(__distribution__)
        except PackageNotFoundError:  # a source tree that was never installed
            return "0+unknown"
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AsyncResolutionRequired",
    "Binding",
    "Container",
    "ContainerError",
    "ContextNotGiven",
    "FinalizerError",
    "Lifetime",
    "Problem",
    "ProblemKind",
    "ProviderKind",
    "ResolutionError",
    "render_problems",
    "Scope",
    "ScopeError",
    "SessionScope",
    "ValidationError",
    # for integrations: reading signatures and graphs the way the container does
    "APP",
    "EMPTY",
    "LEVEL_NAMES",
    "AnnotationError",
    "Param",
    "autowirable",
    "parameters",
    "return_annotation",
    "type_hints",
    "type_name",
]
