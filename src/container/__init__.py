"""A scoped dependency-injection container with compiled resolution plans.

Knows nothing of MCP: usable on its own.
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
)
from container.lifetime import Lifetime
from container.scope import Scope, SessionScope

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
    "Scope",
    "ScopeError",
    "SessionScope",
    "ValidationError",
]
