"""The probe of ``assert_schema_separation``: the real dispatch path, with each tool's
handler body swapped for a recorder, and what is wrong with what a handler received."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from pydantic import ValidationError

from mcp_adapter.compiled.catalog import Catalog, CompiledTool, Hooks
from mcp_adapter.compiled.handlers import Source
from mcp_adapter.declare.request import McpRequest
from mcp_adapter.declare.response import McpResponse
from mcp_adapter.testing.strategies import wire_validated

INJECTED = (Source.SERVICE, Source.REQUEST, Source.HTTP_REQUEST)
"""The sources whose parameters a client must never see or fill."""


@dataclass
class Probe:
    """Stands for one tool's handler: records the arguments of each call."""

    calls: list[dict[str, Any]] = field(default_factory=list)

    async def __call__(self, **kwargs: Any) -> McpResponse:
        self.calls.append(kwargs)
        return McpResponse.text("probe")


def probed(catalog: Catalog) -> tuple[Catalog, dict[str, Probe]]:
    """``catalog`` with each tool's handler a :class:`Probe` (by tool name), its visibility
    hooks and output contract dropped: the check needs no data and has no side effects."""
    probes: dict[str, Probe] = {}
    tools: dict[str, CompiledTool] = {}
    for name, tool in catalog.tools.items():
        probe = probes[name] = Probe()
        handler = dataclasses.replace(tool.handler, function=probe, is_async=True, http_requests=())
        tools[name] = dataclasses.replace(tool, handler=handler, hooks=Hooks(), output=None)
    return dataclasses.replace(catalog, tools=MappingProxyType(tools)), probes


def _is_instance(value: Any, key: Any) -> bool | None:
    """``isinstance`` when it can be asked (``None`` for protocols, generics...)."""
    if not isinstance(key, type):
        return None
    try:
        return isinstance(value, key)
    except TypeError:
        return None


def check_received(
    tool: CompiledTool,
    sent: Mapping[str, Any],
    received: Mapping[str, Any],
    marker: str,
    signed_in: bool = False,
) -> list[str]:
    """What is wrong with the arguments the handler received for payload ``sent``.

    A parameter whose annotation allows ``None`` (``Identity | None``) may hold it
    when the caller is anonymous; a signed-in caller's must be filled."""
    problems: list[str] = []
    try:  # JSON semantics, as the dispatcher; asked of pydantic, not of the server
        expected = wire_validated(tool.input, dict(sent))
    except ValidationError:
        return ["the handler was called with a payload the input contract rejects"]
    for slot in tool.handler.slots:
        value = received.get(slot.name, MISSING)
        where = f"parameter {slot.name!r} ({slot.source.value})"
        if slot.source in INJECTED:
            if slot.source is Source.HTTP_REQUEST:
                continue  # not available in process; the probe does not ask for it
            if value is MISSING:
                problems.append(f"{where} was not filled")
            elif value is None and slot.or_none:
                if signed_in:
                    problems.append(f"{where} received None although the caller is signed in")
            elif isinstance(value, str) and value == marker:
                problems.append(f"{where} received the value a client sent under its name")
            elif slot.source is Source.REQUEST and not isinstance(value, McpRequest):
                problems.append(f"{where} received {type(value).__name__}, not McpRequest")
            elif _is_instance(value, slot.key) is False:
                problems.append(f"{where} received {type(value).__name__}")
        elif slot.source is Source.PAYLOAD:
            if (
                value is MISSING
                or type(value) is not type(expected)
                or tool.input.dump(value) != tool.input.dump(expected)
            ):
                problems.append(f"{where} is not the validated payload")
        elif slot.source is Source.ARGUMENT:
            if value is MISSING or value != getattr(expected, slot.name, MISSING):
                problems.append(f"{where} is not the payload field of that name")
        elif slot.source is Source.DEFAULT and value is not MISSING:
            problems.append(f"{where} was filled although it is left to its default")
        elif slot.source is Source.RESOLVED and value is MISSING:
            problems.append(f"{where} was not filled with its resolver's answer")
    return problems


MISSING: Any = object()
