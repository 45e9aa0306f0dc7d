"""Errors as structured data: every problem carries its dependency path and a hint."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass


class ProblemKind(enum.Enum):
    MISSING = "missing binding"
    CYCLE = "dependency cycle"
    CAPTIVE = "captive dependency"
    UNANNOTATED = "unannotated parameter"
    VARIADIC = "variadic parameter"
    INVALID = "invalid declaration"


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing that stops a dependency graph from being built.

    ``path`` names every step from the root that was asked for to the
    failing node; the renderer appends ``???`` for a missing node.
    """

    kind: ProblemKind
    path: tuple[str, ...]
    message: str
    hint: str = ""

    def render(self) -> str:
        steps = list(self.path)
        if self.kind is ProblemKind.MISSING:
            steps.append("???")
        arrow = " -> ".join(steps)
        text = f"{self.kind.value}: {self.message}\n    path: {arrow}"
        if self.hint:
            text += f"\n    hint: {self.hint}"
        return text

    def __str__(self) -> str:
        return self.render()


def render_problems(title: str, problems: Sequence[Problem]) -> str:
    """``title: N problems`` and each problem rendered below it (what a report prints)."""
    count = len(problems)
    head = f"{title}: {count} problem{'s' if count != 1 else ''}"
    return "\n".join([head, *(f"  {p.render()}" for p in problems)])


class ContainerError(Exception):
    """Base class of every error raised by the container."""


class ResolutionError(ContainerError):
    """A dependency graph cannot be built; ``problems`` lists every reason at once."""

    def __init__(self, problems: Sequence[Problem], *, title: str = "Cannot resolve") -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__(render_problems(title, self.problems))


class ValidationError(ResolutionError):
    """Raised by ``Container.validate()`` with all problems found in the graph."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        super().__init__(problems, title="Container validation failed")


class ScopeError(ContainerError):
    """A service was resolved where its lifetime does not allow it, or a scope was misused."""


class ContextNotGiven(ScopeError):
    """A context value was needed and the scope resolving it was not given one."""


class AsyncResolutionRequired(ContainerError):
    """A synchronous ``get()`` was asked for a service that needs ``await aget()``."""


class FinalizerError(ExceptionGroup[Exception], ContainerError):
    """One or more finalizers failed while a scope or container closed.

    Every other finalizer still ran; the failures are the group's exceptions.
    """
