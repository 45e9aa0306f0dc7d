"""``@tool`` and ``@tool_middleware``: mark methods; the function is returned unchanged."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar, overload

from mcp import types

from mcp_adapter.declare.apps import ToolUI
from mcp_adapter.declare.policy import Policy
from mcp_adapter.declare.tasks import TaskSupport
from mcp_adapter.extensions.spec import Annotations, ToolExtension, ToolSpec

F = TypeVar("F", bound=Callable[..., Any])

TOOL_MARK = "__mcp_tool__"
MIDDLEWARE_MARK = "__mcp_tool_middleware__"
_OPTIONS = frozenset(option.name for option in fields(ToolSpec)) - {"name", "handler"}
"""What ``@tool`` takes besides the name: ``ToolSpec``'s fields (the handler is the function)."""
_SEQUENCES = ("middleware", "policies")
"""Options kept as tuples from the decoration on (a list given may change later)."""


@dataclass(frozen=True, slots=True)
class ToolMark:
    """What ``@tool`` stored on the function: the tool's name (``None``: the function's)
    and the other ``ToolSpec`` fields it was given."""

    name: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def spec(
        self,
        handler: Callable[..., Any],
        default_name: str,
        bind: Callable[[Any], Any] = lambda hook: hook,
    ) -> ToolSpec:
        """The spec of ``handler``; ``bind`` turns a hook given as a function of the
        extension's class into the extension's bound method."""
        spec = ToolSpec(self.name or default_name, handler, **self.options)
        return dataclasses.replace(
            spec,
            should_register=None if spec.should_register is None else bind(spec.should_register),
            authorize=None if spec.authorize is None else bind(spec.authorize),
            middleware=tuple(bind(layer) for layer in spec.middleware),
            policies=tuple(spec.policies),
        )


@dataclass(frozen=True, slots=True)
class MiddlewareMark:
    """The options given to ``@tool_middleware``, stored on the function."""

    name: str
    description: str | None = None
    title: str | None = None
    annotations: Annotations | None = None
    meta: Mapping[str, Any] | None = None

    def extension(self, middleware: Any) -> ToolExtension:
        return ToolExtension(
            name=self.name,
            middleware=middleware,
            description=self.description,
            title=self.title,
            annotations=self.annotations,
            meta=self.meta,
        )


def _mark(function: F, attribute: str, value: Any) -> F:
    target = getattr(function, "__func__", function)  # staticmethod/classmethod objects
    setattr(target, attribute, value)
    return function


@overload
def tool(name: F, /) -> F: ...


@overload
def tool(
    name: str | None = None,
    *,
    title: str | None = None,
    description: str = "",
    annotations: Annotations | None = None,
    toolset: str = "",
    meta: Mapping[str, Any] | None = None,
    icons: Sequence[types.Icon] | None = None,
    should_register: Callable[..., Any] | None = None,
    authorize: Callable[..., Any] | None = None,
    middleware: Sequence[Callable[..., Any]] = (),
    timeout: float | None = None,
    policies: Sequence[Policy] = (),
    task_support: TaskSupport = "forbidden",
    ui: ToolUI | None = None,
) -> Callable[[F], F]: ...


def tool(name: Any = None, **options: Any) -> Any:
    """Mark a method of an ``McpExtension`` as a tool; ``McpExtension.tools()`` collects it.

    The name defaults to the function's name, the description to its docstring.
    The function itself is returned unchanged and stays callable without a server.

    ``middleware`` are the tool's own layers around it and ``timeout`` its limit in
    seconds (``ToolSpec``'s fields); a method of the extension may be named as for a hook.

    ``should_register`` and ``authorize`` are the tool's visibility hooks
    (``ToolSpec``'s fields of the same names). A method of the extension is
    named by writing it above the tool in the class body
    (``authorize=may_launch``): ``tools()`` gives the spec that method bound to
    the extension (a subclass's override of it, if any). Any other callable is
    used as it is. ``policies`` are reusable rules (``Policy``) asked before those
    hooks; the extension's own ``policies`` apply to every tool it contributes.
    ``task_support`` says whether it may run as a task (docs/tasks.md).
    ``ui`` names its interactive view (MCP Apps: ``ToolUI("ui://...")``).

    >>> @tool(title="Add")
    ... def add(a: int, b: int) -> int:
    ...     return a + b
    >>> add(2, 3)
    5
    """
    if callable(name):
        return _mark(name, TOOL_MARK, ToolMark())
    unknown = sorted(options.keys() - _OPTIONS)
    if unknown:
        raise TypeError(f"tool() got an unexpected keyword argument {unknown[0]!r}")
    given = {key: tuple(value) if key in _SEQUENCES else value for key, value in options.items()}
    mark = ToolMark(name, given)

    def decorate(function: F) -> F:
        return _mark(function, TOOL_MARK, mark)

    return decorate


def tool_middleware(
    name: str,
    *,
    description: str | None = None,
    title: str | None = None,
    annotations: Annotations | None = None,
    meta: Mapping[str, Any] | None = None,
) -> Callable[[F], F]:
    """Mark ``async def m(self, call: Call, call_next: Next, ...)`` as middleware around
    the tool contributed under ``name`` (or the class tool of the ``Server``
    declaration named so); the other options amend that tool's listing.

    Parameters after ``call_next`` are injected (services from the call's scope,
    ``McpRequest``, the HTTP ``Request``), as for a handler.

    The platform collects it as a ``ToolExtension`` whatever an override of
    ``McpExtension.tool_extensions()`` returns.
    """
    mark = MiddlewareMark(
        name=name, description=description, title=title, annotations=annotations, meta=meta
    )

    def decorate(function: F) -> F:
        return _mark(function, MIDDLEWARE_MARK, mark)

    return decorate
