"""``Policy``: one reusable visibility rule, attached to any component, server or extension."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    """A rule of who sees and may use components, written once and attached anywhere.

    ``authorize`` says whether **this caller** may use the component (false: it
    is left out of listings and a direct request is refused with ``-32003``);
    ``should_register`` whether the component **exists** for this request at
    all (false: it answers as an absent one). Each is a plain function or
    bound method, sync or async, returning a bool; its parameters are injected
    as a hook's are (``McpRequest``, the caller's ``Identity``, services from
    the container, the HTTP ``Request``, defaults), planned when the server is
    compiled: a parameter without a source is a compile problem whose path
    names the policy and the component.

    Attach it with ``policies=`` wherever a component is declared: a ``Tool``,
    ``Resource`` or ``Prompt`` class attribute, ``@tool(policies=...)``,
    ``ToolSpec(policies=...)``, or for everything at once on a ``Server``
    class or an ``McpExtension`` class. Every policy that applies must agree,
    as must the component's own ``shouldRegister``/``authorize``: the
    ``should_register`` rules run first (server's, extension's, the
    component's policies, its own method), then the ``authorize`` rules in the
    same order; the first false ends the check.

    >>> def signed_in(request) -> bool:
    ...     return request.identity is not None
    >>> Policy(authorize=signed_in).name
    'signed_in'
    """

    authorize: Callable[..., Any] | None = None
    should_register: Callable[..., Any] | None = None
    name: str = ""
    """How problems name it; by default its function's qualified name."""

    def __post_init__(self) -> None:
        hooks = [hook for hook in (self.authorize, self.should_register) if hook is not None]
        if not hooks:
            raise TypeError("a Policy needs authorize=, should_register=, or both")
        for which in ("authorize", "should_register"):
            hook = getattr(self, which)
            if hook is not None and not callable(hook):
                raise TypeError(f"Policy {which}= must be callable, not {hook!r}")
        if not self.name:
            first = hooks[0]
            label = getattr(first, "__qualname__", None) or type(first).__qualname__
            object.__setattr__(self, "name", str(label))
