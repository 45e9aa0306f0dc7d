"""What an extension contributes: ``ToolSpec`` (a tool) and ``ToolExtension`` (an
extension of a tool contributed under the same name)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp import types

from mcp_adapter.declare.annotations import ToolAnnotations
from mcp_adapter.declare.apps import ToolUI
from mcp_adapter.declare.middleware import Middleware
from mcp_adapter.declare.policy import Policy
from mcp_adapter.declare.tasks import TaskSupport

Annotations = ToolAnnotations | types.ToolAnnotations
"""Either spelling of tool annotations; the protocol model is what goes on the wire."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool an extension offers.

    ``handler`` is an ordinary function or bound method, sync or async; its
    parameters are the tool's arguments, except those whose type is
    ``McpRequest``, the HTTP ``Request`` or a service the container builds,
    which are injected. ``description`` empty falls back to the handler's
    docstring; ``toolset`` empty means the contributing extension's own
    (its manifest name); ``meta`` is carried to clients, not interpreted.

    ``should_register`` and ``authorize`` are the tool's visibility hooks, as
    a class tool's ``shouldRegister``/``authorize``: callables (sync or
    async) returning a bool, whose parameters are injected like a hook's
    (``McpRequest``, the HTTP ``Request``, services, defaults). False from
    ``should_register`` makes the tool answer as if it did not exist; false
    from ``authorize`` hides it from listings and refuses a call with -32003.

    >>> def ping() -> str:
    ...     '''Answer pong.'''
    ...     return "pong"
    >>> ToolSpec(name="ping", handler=ping).name
    'ping'
    """

    name: str
    handler: Callable[..., Any]
    description: str = ""
    title: str | None = None
    annotations: Annotations | None = None
    toolset: str = ""
    meta: Mapping[str, Any] | None = None
    icons: Sequence[types.Icon] | None = None
    should_register: Callable[..., Any] | None = None
    authorize: Callable[..., Any] | None = None
    middleware: Sequence[Middleware] = ()
    """Its own layers around the handler (inside the server's and extensions')."""
    timeout: float | None = None
    """Seconds a call may take before it is cancelled; ``None``: the server's."""
    policies: Sequence[Policy] = ()
    """Reusable rules of who sees and may use it (``Policy``), asked before its own
    ``should_register``/``authorize`` (and after its server's and extension's)."""
    task_support: TaskSupport = "forbidden"
    """Whether it may run as a task (docs/tasks.md)."""
    ui: ToolUI | None = None
    """The interactive view it names (MCP Apps), as ``Tool.ui``."""


@dataclass(frozen=True, slots=True)
class ToolExtension:
    """Extends the tool contributed under ``name`` (by another extension), or the
    class tool of the served ``Server`` declaration named so.

    ``middleware`` wraps its handler (a class tool's ``handle``);
    ``description``, ``title`` and ``annotations`` replace the tool's own;
    ``meta`` is merged into its meta; ``replace`` swaps the whole tool for
    another spec with the same name (its toolset, when empty, stays the
    original's, and so does each visibility hook it does not set); a class
    tool cannot be replaced. Two different replacements or amendments of one
    field are a conflict, and extending a name that no extension contributed
    and the declaration does not declare is an error: all are reported when
    the server is built.

    There is no field for visibility hooks: who may see and call a tool is
    decided by the extension that contributes it (``ToolSpec.should_register``
    and ``authorize``), never amended by name.
    """

    name: str
    middleware: Middleware | None = None
    description: str | None = None
    title: str | None = None
    annotations: Annotations | None = None
    meta: Mapping[str, Any] | None = None
    replace: ToolSpec | None = None
