"""Middleware: ``async (call, call_next, ...) -> value``, in one of two stages.

A layer is declared on the server (``Server.middleware``: every method), by the app
that serves it (``http_app(middleware=...)``, ``serve_stdio(middleware=...)``), by an
extension for a tool named so (``ToolExtension.middleware``), or on the component
itself (``Tool.middleware``, ``Resource.middleware``, ``Prompt.middleware``,
``@tool(middleware=...)``). Its parameters after ``(call, call_next)`` are injected,
planned at compile time.

Each layer stands in one **stage** (its ``stage`` attribute; ``"call"`` when it has
none):

- ``"call"``: around the handler, after the name was looked up, the visibility hooks
  ran and the arguments were validated, in the call's scope. ``call.arguments`` are
  the validated arguments; ``call_next`` returns the handler's value before it becomes
  a result (for a listing or ``completion/complete``: the protocol result). It may
  inject any service (a scoped one is the one the handler gets).
- ``"request"`` (server-wide layers only): around everything the adapter does for
  one request, before the name is looked up, before any hook, validation or scoped
  service. ``call.arguments`` are the arguments as the client sent them (read-only);
  ``call_next`` returns the protocol result (``CallToolResult``,
  ``ReadResourceResult``, ...) or raises the protocol error (``MCPError``). It may
  inject singletons and ``McpRequest`` only, and may give the call's scope context
  values (``call.with_context``) that it declares in ``provides``.

``request_stage`` marks a function; a layer object sets ``stage`` (and ``provides``)
as attributes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, Final, Literal, TypeVar, overload

_NO_ARGUMENTS: Mapping[str, Any] = MappingProxyType({})
_NO_CONTEXT: Mapping[Any, Any] = MappingProxyType({})

Stage = Literal["call", "request"]
"""Where a layer stands: see the module's text."""
CALL: Final = "call"
REQUEST: Final = "request"
STAGES: Final = (CALL, REQUEST)


class _Name:
    """The default of ``Call.component``: the call's ``name``."""

    def __repr__(self) -> str:
        return "<the name>"


_SAME_AS_NAME: Any = _Name()


@dataclass(frozen=True, init=False)
class Call:
    """A call as middleware sees it.

    ``method`` is the protocol method (``"tools/call"``, ``"resources/read"``,
    ``"prompts/get"``, ``"tools/list"``, ...); ``name`` the name the client asked for
    (a resource's URI; empty for a listing); ``component`` the component as the
    server's catalog knows it: a tool's or prompt's name, a resource's URI template
    (or static URI), ``""`` for a listing, and ``None`` for a name the catalog does
    not know (it defaults to ``name``). Only ``component`` is bounded by the server:
    log and measure by it. ``stage`` is the stage the layer stands in: ``"call"``
    here, ``"request"`` for a :class:`RequestCall`.

    ``arguments`` are the validated arguments by parameter name (a tool's payload
    fields, a resource's URI variables, a prompt's arguments; injected values are
    never in it). ``with_arguments`` returns a copy with some replaced: they are
    validated again into the component's input before the handler gets them (a value
    it refuses fails the call, as the middleware's error, not the client's).
    """

    name: str
    arguments: Mapping[str, Any]
    method: str
    component: str | None
    stage: ClassVar[Stage] = CALL

    def __init__(
        self,
        name: str,
        arguments: Mapping[str, Any] = _NO_ARGUMENTS,
        method: str = "tools/call",
        component: str | None = _SAME_AS_NAME,
    ) -> None:
        # by hand, into the instance's dict: a call-stage layer makes one per call, and
        # item stores cost less than a generated frozen __init__ (one setattr per field)
        # or an update() with keywords (a dict of them built first)
        fields = self.__dict__
        fields["name"] = name
        fields["arguments"] = arguments
        fields["method"] = method
        fields["component"] = name if component is _SAME_AS_NAME else component

    def with_arguments(self, **changes: Any) -> Call:
        return dataclasses.replace(self, arguments=MappingProxyType({**self.arguments, **changes}))

    def with_context(self, values: Mapping[Any, Any]) -> Call:
        """Only a request-stage call carries context values (see :class:`RequestCall`)."""
        raise TypeError(
            "context values are given at the request stage, before the call's scope "
            "opens; declare the layer with @request_stage(provides=...)"
        )


@dataclass(frozen=True, init=False)
class RequestCall(Call):
    """A call as a request-stage layer sees it: before the name is looked up, with the
    client's arguments (a tool's or prompt's, as sent, read-only; a resource read has
    none: its URI is ``name``) and the context values given so far.

    ``with_context`` returns a copy whose call gets ``values`` (type -> value) as
    context values of its scope: the component's constructor, its hooks, its handler
    and every service resolved in the scope see them. A layer gives only the types its
    ``provides`` declares. ``with_arguments`` raises: arguments are changed at the call
    stage, where they are validated again.
    """

    context: Mapping[Any, Any]
    stage: ClassVar[Stage] = REQUEST

    def __init__(
        self,
        name: str,
        arguments: Mapping[str, Any] = _NO_ARGUMENTS,
        method: str = "tools/call",
        component: str | None = _SAME_AS_NAME,
        context: Mapping[Any, Any] = _NO_CONTEXT,
    ) -> None:
        Call.__init__(self, name, arguments, method, component)
        self.__dict__["context"] = context

    def with_arguments(self, **changes: Any) -> Call:
        raise TypeError(
            "arguments are read-only at the request stage: the client's, before "
            "validation; change them in a call-stage layer"
        )

    def with_context(self, values: Mapping[Any, Any]) -> RequestCall:
        return dataclasses.replace(self, context=MappingProxyType({**self.context, **values}))


Next = Callable[[Call], Awaitable[Any]]
"""Calls the rest of the chain and returns its value (see the stages above)."""


Middleware = Callable[..., Awaitable[Any]]
"""``async (call, call_next, ...) -> value``; the parameters after the first two are injected."""

F = TypeVar("F", bound=Callable[..., Any])


@overload
def request_stage(function: F, /) -> F: ...
@overload
def request_stage(*, provides: Collection[type] = ()) -> Callable[[F], F]: ...
def request_stage(
    function: Callable[..., Any] | None = None, /, *, provides: Collection[type] = ()
) -> Any:
    """Put a middleware function in the request stage (``@request_stage``), declaring the
    context values it gives the call (``@request_stage(provides=[Tenant])``).

    >>> @request_stage
    ... async def count(call, call_next):
    ...     return await call_next(call)
    >>> stage_of(count), provides_of(count)
    ('request', frozenset())
    """

    def mark(target: F) -> F:
        target.stage = REQUEST  # type: ignore[attr-defined]
        target.provides = frozenset(provides)  # type: ignore[attr-defined]
        return target

    return mark if function is None else mark(function)


def stage_of(layer: Any) -> Any:
    """The stage ``layer`` declares (``"call"`` when it declares none)."""
    return getattr(layer, "stage", CALL)


def provides_of(layer: Any) -> frozenset[Any]:
    """The context types ``layer`` declares it gives the call (its ``provides``)."""
    return frozenset(getattr(layer, "provides", None) or ())


def checked_stage(stage: Any, layer: str) -> Stage:
    """``stage`` when it is one (what a built-in layer's ``stage=`` accepts).

    >>> checked_stage("call", "Timing")
    'call'
    """
    if stage not in STAGES:
        raise ValueError(f"{layer} stage= is 'request' or 'call', not {stage!r}")
    return stage  # type: ignore[no-any-return]
