"""A scoped dependency-injection container with compiled resolution plans.

Knows nothing of MCP: usable on its own.
"""

from container.binding import Binding, ProviderKind
from container.container import Container
from container.errors import (
    AsyncResolutionRequired,
    ContainerError,
    FinalizerError,
    Problem,
    ProblemKind,
    ResolutionError,
    ScopeError,
    ValidationError,
)
from container.lifetime import Lifetime
from container.scope import Scope

__all__ = [
    "AsyncResolutionRequired",
    "Binding",
    "Container",
    "ContainerError",
    "FinalizerError",
    "Lifetime",
    "Problem",
    "ProblemKind",
    "ProviderKind",
    "ResolutionError",
    "Scope",
    "ScopeError",
    "ValidationError",
]
