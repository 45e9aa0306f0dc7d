"""Which tools take a state handle back, checked once: at most one ``StateHandle`` field
per input contract, and ``StateHandle`` injected only where a call has one.

A tool whose input contract has a top-level field typed ``StateHandle`` (or
``StateHandle | None``) gets a :class:`~mcp_adapter.compiled.handles.HandleField`: its
calls look the handle up before the handler runs. Every other tool keeps
``handle=None`` and pays nothing per call.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from container import Problem
from mcp_adapter.compiled.catalog import CompiledComponent, CompiledTool
from mcp_adapter.compiled.handles import HandleField
from mcp_adapter.declare.handles import StateHandle
from mcp_adapter.errors import problem


def _takes_handle(annotation: Any) -> bool:
    if annotation is StateHandle:
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        rest = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        return rest == [StateHandle]
    return False


def with_handle(tool: CompiledTool, problems: list[Problem]) -> CompiledTool:
    """``tool`` with the field of its input contract that takes a handle, if it has one."""
    model = tool.input.type
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return tool
    found = [
        (name, info) for name, info in model.model_fields.items() if _takes_handle(info.annotation)
    ]
    if not found:
        return tool
    where = (f"tool {tool.name!r}", f"{model.__qualname__}")
    if len(found) > 1:
        names = ", ".join(name for name, _ in found)
        problems.append(
            problem(
                where,
                f"the input contract has {len(found)} StateHandle fields ({names}); a call "
                "opens in the session of one handle",
                "keep one StateHandle field, and type the others str (look them up "
                "yourself), or split the tool",
            )
        )
        return tool
    if tool.task_support != "forbidden":
        problems.append(
            problem(
                where,
                f"a tool that may run as a task (task_support={tool.task_support!r}) cannot "
                "take a StateHandle: its body runs later, outside the handle's session",
                "set task_support='forbidden', or pass the state itself in the arguments",
            )
        )
        return tool
    name, info = found[0]
    wire = info.alias if isinstance(info.alias, str) else name
    return dataclasses.replace(tool, handle=HandleField(name, wire))


def handle_problems(
    components: Iterable[tuple[str, CompiledComponent]],
) -> list[Problem]:
    """A problem for each component that takes the current ``StateHandle`` (in a
    handler, hook or service) while its calls carry none."""
    problems: list[Problem] = []
    for owner, component in components:
        if StateHandle not in component.contexts:
            continue
        if isinstance(component, CompiledTool) and component.handle is not None:
            continue
        problems.append(
            problem(
                (owner, "StateHandle"),
                "it takes the current StateHandle (directly or through a service), but its "
                "calls carry no handle",
                "add a field typed StateHandle to the tool's input contract, or take "
                "StateHandles to open one",
            )
        )
    return problems
