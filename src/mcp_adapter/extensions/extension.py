"""``McpExtension``: offers tools (and extensions of other tools) without holding a server."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from mcp_adapter.declare.naming import default_name
from mcp_adapter.declare.policy import Policy
from mcp_adapter.extensions.decorator import MIDDLEWARE_MARK, TOOL_MARK, MiddlewareMark, ToolMark
from mcp_adapter.extensions.manifest import PluginManifest
from mcp_adapter.extensions.spec import ToolExtension, ToolSpec


class McpExtension:
    """Base class of extensions.

    ``tools()`` returns every method marked with ``@tool``, bound to this
    instance, in definition order (base classes first); override it to build
    specs at run time, and return ``[*super().tools(), *more]`` to keep both.
    ``tool_extensions()`` likewise returns the ``@tool_middleware`` methods; the
    platform collects those whatever an override returns (an override that forgets
    ``*super().tool_extensions()`` drops none of them, and one that keeps them does
    not contribute them twice).
    """

    policies: ClassVar[Sequence[Policy]] = ()
    """Rules (``Policy``) every tool it contributes must pass, asked before the tool's
    own; the platform applies them to every ``ToolSpec`` it gets from ``tools()``."""

    def manifest(self) -> PluginManifest:
        """Name and version; by default the class name without ``Extension``, kebab-case."""
        return PluginManifest(name=default_name(type(self).__name__, "Extension"))

    def tools(self) -> list[ToolSpec]:
        marked = self._marked(TOOL_MARK, ToolMark)
        specs = [mark.spec(bound, attribute, self._bind) for attribute, mark, bound in marked]
        return [self.governed(spec) for spec in specs]

    def governed(self, spec: ToolSpec) -> ToolSpec:
        """``spec`` with this extension's ``policies`` before its own (each once): what
        the platform serves of every spec the extension contributes, and what ``tools()``
        gives ``put_on_server``."""
        own: object = type(self).policies
        if not own or not isinstance(own, tuple | list):
            return spec  # not a sequence of policies: the platform reports it
        missing = tuple(
            p for p in own if isinstance(p, Policy) and all(p is not q for q in spec.policies)
        )
        if not missing:
            return spec
        return dataclasses.replace(spec, policies=(*missing, *spec.policies))

    def tool_extensions(self) -> list[ToolExtension]:
        return self._decorated_extensions()

    def _decorated_extensions(self) -> list[ToolExtension]:
        """The ``@tool_middleware`` methods, in definition order (base classes first)."""
        marked = self._marked(MIDDLEWARE_MARK, MiddlewareMark)
        return [mark.extension(bound) for _, mark, bound in marked]

    def _contributed_extensions(self) -> list[ToolExtension]:
        """What the platform collects: the ``@tool_middleware`` methods first, whatever
        ``tool_extensions()`` returns, then what else it returns."""
        decorated = self._decorated_extensions()
        more = [value for value in self.tool_extensions() if value not in decorated]
        return [*decorated, *more]

    def _bind(self, hook: Any) -> Any:
        """``hook`` as this extension's bound method when it is a function of its class
        (looked up by attribute name, so a subclass's override answers); else ``hook``."""
        if inspect.ismethod(hook):
            return hook
        function = hook.__func__ if isinstance(hook, staticmethod | classmethod) else hook
        for klass in type(self).__mro__:
            for name, raw in vars(klass).items():
                if raw is hook or getattr(raw, "__func__", raw) is function:
                    return getattr(self, name)
        return hook

    def _marked(self, attribute: str, kind: type[Any]) -> Iterator[tuple[str, Any, Any]]:
        cls = type(self)
        names: dict[str, None] = {}
        for klass in reversed(cls.__mro__):
            names.update(dict.fromkeys(vars(klass)))
        for name in names:
            raw = inspect.getattr_static(cls, name, None)
            function = getattr(raw, "__func__", raw)
            mark = getattr(function, attribute, None)
            if isinstance(mark, kind):
                yield name, mark, getattr(self, name)
