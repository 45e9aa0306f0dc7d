"""Middleware: ``async (call, call_next, ...) -> value`` around a component's call.

One stage of the dispatcher for every method. A layer is declared on the server
(``Server.middleware``: every method), by an extension for a tool named so
(``ToolExtension.middleware``), or on the component itself (``Tool.middleware``,
``Resource.middleware``, ``Prompt.middleware``, ``@tool(middleware=...)``); the
server's run outermost, the component's own innermost. Its parameters after
``(call, call_next)`` are injected like a handler's, planned at compile time and
resolved in the call's scope (a scoped service is the one the handler gets).

What ``call_next`` returns is what the rest of the chain returns: for a component
call (``tools/call``, ``resources/read``, ``prompts/get``) the handler's value
before it becomes a result, for a listing or ``completion/complete`` the protocol
result. A layer may return its own value instead; it is read as the handler's
would be.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

_NO_ARGUMENTS: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Call:
    """A call as middleware sees it.

    ``method`` is the protocol method (``"tools/call"``, ``"resources/read"``,
    ``"prompts/get"``, ``"tools/list"``, ...); ``name`` the component's name (a
    resource's URI; empty for a listing); ``arguments`` the validated arguments by
    parameter name (a tool's payload fields, a resource's URI variables, a prompt's
    arguments; injected values are never in it). ``with_arguments`` returns a copy
    with some replaced: they are validated again into the component's input before
    the handler gets them (a value it refuses fails the call, as the middleware's
    error, not the client's).
    """

    name: str
    arguments: Mapping[str, Any] = field(default_factory=lambda: _NO_ARGUMENTS)
    method: str = "tools/call"

    def with_arguments(self, **changes: Any) -> Call:
        return dataclasses.replace(self, arguments=MappingProxyType({**self.arguments, **changes}))


Next = Callable[[Call], Awaitable[Any]]
"""Calls the rest of the chain (finally the handler) and returns its value."""


Middleware = Callable[..., Awaitable[Any]]
"""``async (call, call_next, ...) -> value``; the parameters after the first two are injected."""
