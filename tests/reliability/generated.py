"""Hypothesis strategies that build whole tools: random payload contracts, random injected
parameters, as class tools (``Tool`` subclasses) and as ``@tool`` methods of an extension.

Every built handler records the keyword arguments it received, so a test can
see exactly what reached it.
"""

from __future__ import annotations

import datetime
import itertools
import keyword
import types
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import pydantic
from hypothesis import strategies as st
from pydantic import ConfigDict, Field

from container import Container
from mcp_adapter import McpRequest, McpResponse, Server, Tool
from schemas import Schema

_counter = itertools.count()


# -- services a handler can ask for -------------------------------------------------------------


class Ledger:
    """Scoped, built by a generator whose code after ``yield`` records the close."""

    def __init__(self) -> None:
        self.closed = False


class Clock:
    """A singleton built by an async factory."""


class Mailer:
    """Transient, autowired (no binding)."""


class Audit:
    """Scoped, plain class."""


SERVICES: tuple[type, ...] = (Ledger, Clock, Mailer, Audit, McpRequest)


def service_container() -> Container:
    container = Container()

    def ledger() -> Iterator[Ledger]:
        value = Ledger()
        yield value
        value.closed = True

    async def clock() -> Clock:
        return Clock()

    container.scoped(Ledger, ledger)
    container.singleton(Clock, clock)
    container.scoped(Audit)
    return container


# -- payload contracts --------------------------------------------------------------------------

NAMES = st.from_regex(r"\A[a-z][a-z0-9]{0,5}\Z").filter(
    lambda n: (
        not keyword.iskeyword(n) and n not in ("self", "payload") and not n.startswith("model")
    )
)
"""Identifiers for payload fields and handler parameters, from one pool so that they collide."""

LEAVES: st.SearchStrategy[Any] = st.sampled_from(
    [
        int,
        str,
        bool,
        float,
        datetime.date,
        uuid.UUID,
        Literal["red", "green"],
        Annotated[int, Field(ge=0, le=100)],
        Annotated[str, Field(min_length=1, max_length=8)],
        Annotated[float, Field(gt=-1.0, lt=1.0)],
        Annotated[list[int], Field(max_length=3)],
    ]
)


class StrictSchema(Schema):
    """No coercion: only what the published schema describes, with JSON semantics."""

    model_config = ConfigDict(extra="forbid", strict=True)


def _model(fields: dict[str, Any], base: type[Schema] = Schema) -> type[Schema]:
    return pydantic.create_model(f"Model{next(_counter)}", __base__=base, **fields)


@st.composite
def models(draw: st.DrawFn, inner: st.SearchStrategy[Any], max_fields: int = 4) -> type[Schema]:
    """A ``Schema`` subclass with random fields: required, optional or defaulted."""
    names = draw(st.lists(NAMES, min_size=1, max_size=max_fields, unique=True))
    fields: dict[str, Any] = {}
    for name in names:
        tp = draw(inner)
        kind = draw(st.sampled_from(["required", "optional", "list-default"]))
        if kind == "required":
            fields[name] = (tp, ...)
        elif kind == "optional":
            fields[name] = (tp | None, None)
        else:
            fields[name] = (list[tp], Field(default_factory=list))  # type: ignore[valid-type]
    return _model(fields, draw(st.sampled_from([Schema, StrictSchema])))


def _union(pair: tuple[Any, Any]) -> Any:
    first, second = pair
    return first if first == second else first | second


def field_types() -> st.SearchStrategy[Any]:
    """Leaves, lists, optionals, unions, maps and nested models, a few levels deep."""
    return st.recursive(
        LEAVES,
        lambda inner: st.one_of(
            inner.map(lambda t: list[t]),  # type: ignore[valid-type]
            inner.map(lambda t: t | None),
            st.tuples(inner, inner).map(_union),
            inner.map(lambda t: dict[str, t]),  # type: ignore[valid-type]
            models(inner, max_fields=3),
        ),
        max_leaves=4,
    )


def contracts() -> st.SearchStrategy[type[Schema]]:
    return models(field_types())


# -- tools -----------------------------------------------------------------------------------


@dataclass
class Built:
    """A generated tool: its server, container, and what its handler received."""

    name: str
    server: type[Server]
    container: Container
    contract: type[Schema] | None
    injected: dict[str, type]
    """Injected parameter name -> the type the container (or the server) fills it with."""
    calls: list[dict[str, Any]] = field(default_factory=list)
    platform: Any = None

    @property
    def served(self) -> Any:
        return self.platform if self.platform is not None else self.server

    def fields(self) -> set[str]:
        return set(self.contract.model_fields) if self.contract is not None else set()


@st.composite
def injected_parameters(draw: st.DrawFn, taken: set[str]) -> dict[str, type]:
    names = draw(st.lists(NAMES.filter(lambda n: n not in taken), max_size=4, unique=True))
    return {name: draw(st.sampled_from(SERVICES)) for name in names}


def _signature(params: list[str]) -> str:
    return ", ".join(["self", "*", *params]) if params else "self"


@st.composite
def class_tools(draw: st.DrawFn) -> Built:
    """A ``Tool[Contract]`` (or ``input = Contract``) whose ``handle`` takes services too."""
    contract = draw(contracts())
    injected = draw(injected_parameters(set()))
    is_async = draw(st.booleans())
    by_generic = draw(st.booleans())
    name = f"generated_{next(_counter)}"
    built = Built(name, Server, service_container(), contract, injected)
    namespace: dict[str, Any] = {"McpResponse": McpResponse, "CALLS": built.calls}
    params = ["payload: CONTRACT"]
    for index, (param, service) in enumerate(injected.items()):
        namespace[f"S{index}"] = service
        params.append(f"{param}: S{index}")
    namespace["CONTRACT"] = contract
    source = (
        f"{'async ' if is_async else ''}def handle({_signature(params)}):\n"
        "    CALLS.append(dict(locals()))\n"
        "    return McpResponse.text('ok')\n"
    )
    exec(source, namespace)  # a test fixture: the signature is the variable under test
    body: dict[str, Any] = {"name": name, "handle": namespace["handle"], "__module__": __name__}
    if by_generic:
        cls = types.new_class("GeneratedTool", (Tool[contract],), {}, lambda ns: ns.update(body))  # type: ignore[valid-type]
    else:
        cls = type("GeneratedTool", (Tool,), {**body, "input": contract})
    built.server = type("GeneratedServer", (Server,), {"tools": (cls,), "__module__": __name__})
    return built


@st.composite
def extension_tools(draw: st.DrawFn) -> Built:
    """An ``McpExtension`` with one ``@tool`` method: arguments and services side by side."""
    from mcp_adapter.extensions import McpExtension, Platform, tool

    arguments = draw(st.lists(NAMES, min_size=0, max_size=4, unique=True))
    injected = draw(injected_parameters(set(arguments)))
    name = f"generated_{next(_counter)}"
    built = Built(name, Server, service_container(), None, injected)
    namespace: dict[str, Any] = {"CALLS": built.calls, "tool": tool}
    params: list[str] = []
    fields: dict[str, Any] = {}
    for index, argument in enumerate(arguments):
        tp = draw(field_types())
        optional = draw(st.booleans())
        namespace[f"T{index}"] = tp | None if optional else tp
        params.append(f"{argument}: T{index}" + (" = None" if optional else ""))
        fields[argument] = (tp | None, None) if optional else (tp, ...)
    for index, (param, service) in enumerate(injected.items()):
        namespace[f"S{index}"] = service
        params.append(f"{param}: S{index}")
    order = draw(st.permutations(params))
    is_async = draw(st.booleans())
    source = (
        f"@tool({name!r})\n"
        f"{'async ' if is_async else ''}def method({_signature(list(order))}):\n"
        "    CALLS.append({k: v for k, v in locals().items() if k != 'self'})\n"
        "    return 'ok'\n"
    )
    exec(source, namespace)  # a test fixture: the signature is the variable under test
    extension = type(
        "GeneratedExtension",
        (McpExtension,),
        {"method": namespace["method"], "__module__": __name__},
    )
    built.platform = Platform([extension()])
    built.contract = _model(fields) if fields else None
    return built
