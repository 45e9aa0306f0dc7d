"""Which parameters of a function tool are its arguments, and their pydantic model.

The split is decided once, at compile time. A parameter is injected (kept out
of the schema) when its type is ``McpRequest``, the HTTP ``Request`` or a
service: a type bound in the container, or a class the container can build
that is not a data type. Everything else is an argument. The handler plan
itself comes from ``handlers.plan_function`` with these names as arguments,
so injection is the same mechanism as for class tools.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import pydantic
from pydantic import BaseModel, ConfigDict, TypeAdapter
from pydantic.fields import FieldInfo
from starlette.requests import Request as HttpRequest
from typing_extensions import is_typeddict

from container import (
    EMPTY,
    AnnotationError,
    Container,
    Param,
    Problem,
    autowirable,
    parameters,
    type_name,
)
from mcp_adapter.compile.handlers import is_resolved, reroot
from mcp_adapter.compiled import context as context_values
from mcp_adapter.declare.handles import StateHandle
from mcp_adapter.declare.request import McpRequest
from mcp_adapter.errors import problem
from schemas import Schema


class ToolArguments(Schema):
    """Base of the generated argument models: unknown fields are rejected."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())


def _injected_by_type(key: Any) -> bool:
    return key is McpRequest or (isinstance(key, type) and issubclass(key, HttpRequest))


def _is_data_type(key: Any) -> bool:
    """A class a client could send as a value (and so could be an argument)."""
    if not isinstance(key, type):
        return False
    return (
        issubclass(key, BaseModel | enum.Enum)
        or dataclasses.is_dataclass(key)
        or is_typeddict(key)
        or (issubclass(key, tuple) and hasattr(key, "_fields"))
    )


def _describable(annotation: Any) -> str | None:
    """``None`` when pydantic can validate and describe ``annotation``; else why not."""
    try:
        TypeAdapter(annotation).json_schema()
    except Exception as exc:  # noqa: BLE001 - any failure means "not an argument type"
        return str(exc).splitlines()[0].split(". ")[0]
    return None


def _has_field_info(param: Param) -> bool:
    return any(isinstance(item, FieldInfo) for item in param.metadata)


def split_parameters(
    function: Callable[..., Any],
    label: str,
    container: Container,
    problems: list[Problem],
    reported: list[str] | None = None,
) -> list[Param]:
    """The parameters of ``function`` that are tool arguments, in order.

    Appends to ``problems`` what makes a parameter neither an argument nor
    injectable, or both at once, and the names of those parameters to
    ``reported`` (so the handler plan does not report them again).
    """
    reported = reported if reported is not None else []
    context_values.declare(container)  # McpRequest, Identity, ... are context values: injected
    try:
        params = parameters(function)
    except (AnnotationError, ValueError) as exc:
        problems.append(problem((label,), str(exc), "annotate with importable types"))
        return []
    bound = container.bindings
    arguments: list[Param] = []
    for param in params:
        here = (f"{label}({param.name})",)
        key = param.key
        if param.variadic or _injected_by_type(key) or is_resolved(param):
            continue  # plan_function reports *args/**kwargs and fills the requests
        if _has_field_info(param) or key is EMPTY or key is StateHandle:
            arguments.append(param)  # a StateHandle parameter: the handle the client passes
        elif not isinstance(key, type) or key.__module__ == "builtins":
            arguments.append(param)  # JSON-native: never a service, even if bound
        elif key in bound:
            continue  # explicitly bound: a service (its problems come from the plan)
        elif autowirable(key) and container.node(key).ok:
            if _is_data_type(key):
                problems.append(_ambiguous(param, label, here))
                reported.append(param.name)
            # else: a service the container autowires
        else:
            reason = _describable(param.annotation)
            if reason is None:
                arguments.append(param)
            elif not param.has_default:
                # not a value a client could send: the container's problem, as for a class tool
                problems.extend(reroot(found, here) for found in container.node(key).problems)
                reported.append(param.name)
            # else: left to its default, as for class tools
    return arguments


def _ambiguous(param: Param, label: str, here: tuple[str, ...]) -> Problem:
    name = type_name(param.key)
    return problem(
        here,
        f"parameter {param.name}: {name} of {label} is ambiguous: the container can build "
        f"{name} and a client could send it as an argument",
        f"to inject it, bind it (container.scoped({name})); to take it as an argument, "
        f"annotate it: {param.name}: Annotated[{name}, Field()]",
    )


def arguments_model(
    model_name: str, params: Sequence[Param], label: str, problems: list[Problem]
) -> type[BaseModel] | None:
    """The pydantic model of the arguments: defaults included, unknown fields rejected."""
    fields: dict[str, Any] = {}
    before = len(problems)
    for param in params:
        here = (f"{label}({param.name})",)
        if param.name.startswith("_") or param.name == "model_config":
            problems.append(
                problem(
                    here,
                    f"{param.name!r} of {label} cannot be a tool argument name",
                    "argument names cannot start with '_' or be 'model_config'; rename it",
                )
            )
            continue
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            problems.append(
                problem(
                    here,
                    f"{param.name!r} of {label} is positional-only; arguments are passed by name",
                    "remove the '/' from the signature",
                )
            )
            continue
        annotation = Any if param.annotation is EMPTY else param.annotation
        fields[param.name] = (annotation, param.default if param.has_default else ...)
    if len(problems) > before:
        return None
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", ".*shadows an attribute", UserWarning)
            model: type[BaseModel] = pydantic.create_model(
                model_name, __base__=ToolArguments, **fields
            )
            TypeAdapter(model).json_schema()
    except Exception as exc:  # noqa: BLE001 - reported as a compile problem
        problems.append(problem((label,), f"the arguments of {label} are not valid: {exc}"))
        return None
    return model
