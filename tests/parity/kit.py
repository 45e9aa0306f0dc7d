"""One description of a tool, built twice: a class ``Tool`` of a ``Server`` and a ``@tool``
method of an ``McpExtension`` on a ``Platform``; both reached through ``McpTestClient``.

A ``Case`` names the arguments (``Arg``: the fields of the class tool's input ``Schema``,
the parameters of the function), the injected parameters, a body that computes the
answer from both, the output contract, the visibility hooks and the middleware.
``class_tool_server`` and ``function_tool_platform`` write the two declarations from
it; ``observe`` runs the case's calls (and a listing) in one era and returns what a
client sees, normalised; ``assert_same`` compares two observations field by field.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import re
import types as types_module
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pydantic
import pydantic_core
import pytest
from mcp import types

from container import Container
from mcp_adapter import (
    McpExtension,
    McpRequest,
    McpResponse,
    Platform,
    PluginManifest,
    Policy,
    Server,
    Tool,
    ToolAnnotations,
    tool,
)
from mcp_adapter.declare.request import Identity
from mcp_adapter.extensions import ToolExtension
from mcp_adapter.testing import McpTestClient
from schemas import Schema

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ERAS = (MODERN, LEGACY)

REQUIRED: Any = inspect.Parameter.empty
"""An ``Arg`` without a default."""

SERVER_INFO = "io.modelcontextprotocol/serverInfo"
INCIDENT = re.compile(r"\b[0-9a-f]{12}\b")

# -- the services a handler, a hook or middleware may get injected ---------------------------


class Journal:
    """What happened in one container (a singleton): counters and events, in order."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.counts: dict[str, int] = {}

    def number(self, kind: str) -> int:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        return self.counts[kind]


class Scoped:
    """A scoped service: one per call, shared by everything in that call."""

    def __init__(self, journal: Journal) -> None:
        self.number = journal.number("scoped")
        self.notes: list[str] = []


class Single:
    """A singleton: one for every call of a container."""

    def __init__(self, journal: Journal) -> None:
        self.number = journal.number("single")


class Unit:
    """A scoped service with a finalizer (a generator factory): a unit of work."""

    def __init__(self, number: int) -> None:
        self.number = number


def open_unit(journal: Journal) -> Iterator[Unit]:
    unit = Unit(journal.number("unit"))
    journal.events.append(f"open unit#{unit.number}")
    error = yield unit
    outcome = f"rollback ({type(error).__name__})" if error else "commit"
    journal.events.append(f"{outcome} unit#{unit.number}")


class Features:
    """Feature flags (a singleton): what a ``should_register`` hook reads."""

    def __init__(self) -> None:
        self.enabled = {"parity"}


def new_container() -> Container:
    """What every case is served from: a fresh container per side and era."""
    container = Container()
    container.instance(Journal, Journal())
    container.scoped(Scoped)
    container.singleton(Single)
    container.scoped(Unit, open_unit)
    container.singleton(Features)
    return container


def describe(value: Any) -> Any:
    """An injected value as text that is equal on both sides when the injection is."""
    if isinstance(value, Scoped):
        return f"scoped#{value.number}"
    if isinstance(value, Single):
        return f"single#{value.number}"
    if isinstance(value, Unit):
        return f"unit#{value.number}"
    if isinstance(value, McpRequest):
        subject = value.identity.subject if value.identity else None
        return f"request {value.method} {value.protocol_version} {subject}"
    if isinstance(value, Identity):
        return f"identity {value.subject}"
    if isinstance(value, Features):
        return f"features {sorted(value.enabled)}"
    return repr(value)


def jsonable(value: Any) -> Any:
    return pydantic_core.to_jsonable_python(value)


def as_text(args: Mapping[str, Any], injected: Mapping[str, Any]) -> str:
    """The default body: what the handler got, as deterministic JSON text."""
    seen = {
        "args": {name: [type(v).__name__, jsonable(v)] for name, v in args.items()},
        "injected": {name: describe(v) for name, v in injected.items()},
    }
    return json.dumps(seen, sort_keys=True)


# -- one case ------------------------------------------------------------------------------

Body = Callable[[Mapping[str, Any], Mapping[str, Any]], Any]
"""``(arguments by name, injected values by name) -> value``; may raise."""

Wrap = Literal["auto", "text", "structured", "instance", "bare"]
"""How a handler hands the body's value back. ``auto``: a class tool returns
``McpResponse.text`` without an output contract, ``McpResponse.structured`` with one; a
function returns the value itself. ``instance`` builds the output ``Schema`` from a dict."""

Expect = Literal["ok", "invalid", "failed", "tool-error", "unknown", "forbidden"]


@dataclass(frozen=True)
class Arg:
    name: str
    annotation: Any
    default: Any = REQUIRED


@dataclass(frozen=True)
class Call:
    arguments: Mapping[str, Any] | None
    expect: Expect
    """What a client must see on both sides (the check a case without it could pass)."""


@dataclass(frozen=True)
class Hook:
    """A visibility hook: ``decide`` gets its injected parameters by name."""

    inject: Mapping[str, Any]
    decide: Callable[[Mapping[str, Any]], bool]
    is_async: bool = False


@dataclass(frozen=True)
class Case:
    id: str
    calls: tuple[Call, ...]
    fields: tuple[Arg, ...] = ()
    inject: Mapping[str, Any] = field(default_factory=dict)
    """Injected handler parameters by name: the annotation (a service, McpRequest, ...)."""
    body: Body = as_text
    output: Any = None
    """The output contract: ``Tool[In, output]`` / ``-> output``; ``None`` for none."""
    class_wrap: Wrap = "auto"
    function_wrap: Wrap = "auto"
    is_async: bool = True
    doc: str | None = "A parity tool."
    title: str | None = None
    annotations: ToolAnnotations | None = None
    meta: Mapping[str, Any] | None = None
    should_register: Hook | None = None
    authorize: Hook | None = None
    middleware: Sequence[Callable[..., Awaitable[Any]]] = ()
    policy_at: Literal["", "component", "owner"] = ""
    """Where ``should_register``/``authorize`` go as one ``Policy`` (the same object on
    both sides) instead of hook methods: on the tool (``Tool.policies``,
    ``@tool(policies=)``) or on its owner (``Server.policies``, ``McpExtension.policies``)."""
    identity: Identity | None = None
    listed: bool = True
    """Whether ``tools/list`` shows the tool to this case's caller."""
    handler_calls: int | None = None
    """How many calls reach the handler (a handler's services are built only then);
    ``None``: every call with valid arguments to a listed tool."""
    divergence: str | Mapping[str, str] = ""
    """Why the calls differ today (one reason, or one per era): the call test is a strict
    xfail."""
    content_divergence: str | Mapping[str, str] = ""
    """Why the content blocks of structured results differ today (the content test)."""
    listing_divergence: str | Mapping[str, str] = ""
    """Why the ``tools/list`` entries differ today: the listing test is a strict xfail."""

    @property
    def tool(self) -> str:
        return re.sub(r"[^A-Za-z0-9_.-]", "_", self.id)


Aspect = Literal["calls", "content", "listing"]


def params(cases: Sequence[Case], aspect: Aspect = "calls") -> list[Any]:
    """``pytest.param``s of ``(case, era)``; a diverging one is a strict xfail with its
    reason (``Case.divergence``, ``content_divergence`` or ``listing_divergence``)."""
    found = []
    for case in cases:
        for era in ERAS:
            why = {
                "calls": case.divergence,
                "content": case.content_divergence,
                "listing": case.listing_divergence,
            }[aspect]
            reason = why.get(era, "") if isinstance(why, Mapping) else why
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            found.append(pytest.param(case, era, id=f"{case.id}-{era}", marks=marks))
    return found


# -- writing the two declarations ----------------------------------------------------------


def _function(
    name: str,
    parameters: Sequence[inspect.Parameter],
    returns: Any,
    run: Callable[[dict[str, Any]], Any],
    *,
    is_async: bool,
    doc: str | None = None,
    owner: str = "",
) -> Callable[..., Any]:
    """A function whose signature is ``parameters`` (what the planners read), calling
    ``run`` with its arguments by name (``self`` left out)."""
    signature = inspect.Signature(list(parameters), return_annotation=returns)

    def by_name(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return {k: v for k, v in bound.arguments.items() if k != "self"}

    if is_async:

        async def function_async(*args: Any, **kwargs: Any) -> Any:
            return run(by_name(args, kwargs))

        function: Callable[..., Any] = function_async
    else:

        def function_sync(*args: Any, **kwargs: Any) -> Any:
            return run(by_name(args, kwargs))

        function = function_sync
    function.__name__ = name
    function.__qualname__ = f"{owner}.{name}" if owner else name
    function.__signature__ = signature  # type: ignore[attr-defined]
    annotations = {p.name: p.annotation for p in parameters if p.annotation is not p.empty}
    if returns is not inspect.Signature.empty:
        annotations["return"] = returns
    function.__annotations__ = annotations
    function.__doc__ = doc
    return function


def _positional(name: str, annotation: Any = inspect.Parameter.empty, default: Any = REQUIRED):
    return inspect.Parameter(
        name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=annotation, default=default
    )


SELF = _positional("self")


def _hook(name: str, hook: Hook, owner: str) -> Callable[..., Any]:
    parameters = [SELF, *(_positional(n, a) for n, a in hook.inject.items())]
    return _function(name, parameters, bool, hook.decide, is_async=hook.is_async, owner=owner)


_POLICIES: dict[str, Policy] = {}


def policy_of(case: Case) -> Policy:
    """The case's hooks as one ``Policy`` of plain functions; the same object for both
    sides of a case."""
    if case.id not in _POLICIES:
        hooks: dict[str, Any] = {}
        for which, hook in (
            ("should_register", case.should_register),
            ("authorize", case.authorize),
        ):
            if hook is not None:
                parameters = [_positional(n, a) for n, a in hook.inject.items()]
                hooks[which] = _function(
                    f"policy_{which}", parameters, bool, hook.decide, is_async=hook.is_async
                )
        _POLICIES[case.id] = Policy(**hooks, name=f"{case.tool} policy")
    return _POLICIES[case.id]


def _policies(case: Case, at: str) -> tuple[Policy, ...]:
    return (policy_of(case),) if case.policy_at == at else ()


def _wrap(case: Case, value: Any, mode: Wrap, *, function: bool) -> Any:
    if isinstance(value, McpResponse | types.CallToolResult):
        return value
    if mode == "auto":
        if function:
            return value
        mode = "text" if case.output is None else "structured"
    if mode == "text":
        return McpResponse.text(value if isinstance(value, str) else json.dumps(value))
    if mode == "structured":
        return McpResponse.structured(value)
    if mode == "instance":
        return case.output.model_validate(value)
    return value


def _split(case: Case, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    return {name: kwargs[name] for name in case.inject}


def class_name(case: Case) -> str:
    """The class tool's class name: ``<tool>Tool``."""
    return f"{case.tool}Tool"


def extension_name(case: Case) -> str:
    """The function tool's extension class name: ``<tool>Extension``."""
    return f"{case.tool}Extension"


def input_model(case: Case) -> type[Schema]:
    """The class tool's input contract: one field per ``Arg``."""
    fields: dict[str, Any] = {
        arg.name: (arg.annotation, ... if arg.default is REQUIRED else arg.default)
        for arg in case.fields
    }
    model: type[Schema] = pydantic.create_model(
        f"{case.tool}Input",
        __base__=Schema,
        **fields,
    )
    return model


def class_tool(case: Case) -> type[Tool[Any, Any]]:
    """The case as ``class X(Tool[Input, Output])`` with ``handle(self, payload, ...)``."""
    model = input_model(case)
    names = [arg.name for arg in case.fields]

    def run(kwargs: dict[str, Any]) -> Any:
        payload = kwargs["payload"]
        args = {name: getattr(payload, name) for name in names}
        value = case.body(args, _split(case, kwargs))
        return _wrap(case, value, case.class_wrap, function=False)

    handle_params = [
        SELF,
        _positional("payload", model),
        *(_positional(n, a) for n, a in case.inject.items()),
    ]
    returns = McpResponse if case.class_wrap != "bare" else Any
    namespace: dict[str, Any] = {
        "name": case.tool,
        "title": case.title,
        "annotations": case.annotations,
        "meta": case.meta,
        "__doc__": case.doc,
        "__module__": __name__,
        "handle": _function(
            "handle", handle_params, returns, run, is_async=case.is_async, owner=class_name(case)
        ),
    }
    if case.policy_at:
        namespace["policies"] = _policies(case, "component")
    else:
        if case.should_register is not None:
            namespace["shouldRegister"] = _hook(
                "shouldRegister", case.should_register, class_name(case)
            )
        if case.authorize is not None:
            namespace["authorize"] = _hook("authorize", case.authorize, class_name(case))
    base = Tool[model, case.output] if case.output is not None else Tool[model]  # type: ignore[valid-type]
    made: type[Tool[Any, Any]] = types_module.new_class(
        class_name(case), (base,), exec_body=lambda body: body.update(namespace)
    )
    return made


def class_tool_server(case: Case) -> type[Server]:
    namespace = {
        "name": "classes",
        "tools": (class_tool(case),),
        "policies": _policies(case, "owner"),
    }
    return type(f"{case.tool}Server", (Server,), namespace)


def function_tool_extension(case: Case) -> McpExtension:
    """The case as an ``McpExtension`` with one ``@tool`` method (hooks: methods above it)."""
    names = [arg.name for arg in case.fields]

    def run(kwargs: dict[str, Any]) -> Any:
        args = {name: kwargs[name] for name in names}
        value = case.body(args, _split(case, kwargs))
        return _wrap(case, value, case.function_wrap, function=True)

    required = [a for a in case.fields if a.default is REQUIRED]
    defaulted = [a for a in case.fields if a.default is not REQUIRED]
    parameters = [
        SELF,
        *(_positional(a.name, a.annotation) for a in required),
        *(_positional(n, a) for n, a in case.inject.items()),
        *(_positional(a.name, a.annotation, a.default) for a in defaulted),
    ]
    if case.function_wrap in ("text", "structured"):
        returns: Any = McpResponse
    elif case.output is not None:
        returns = case.output
    else:
        returns = inspect.Signature.empty
    owner = extension_name(case)
    handler = _function(
        case.tool, parameters, returns, run, is_async=case.is_async, doc=case.doc, owner=owner
    )
    namespace: dict[str, Any] = {"__module__": __name__}
    hooks: dict[str, Any] = {}
    for which, hook in (("should_register", case.should_register), ("authorize", case.authorize)):
        if hook is not None and not case.policy_at:
            namespace[which] = hooks[which] = _hook(which, hook, owner)
    namespace[case.tool] = tool(
        name=case.tool,
        title=case.title,
        annotations=case.annotations,
        meta=case.meta,
        policies=_policies(case, "component"),
        **hooks,
    )(handler)
    namespace["policies"] = _policies(case, "owner")
    namespace["manifest"] = lambda self: PluginManifest(name="functions", version="1.0.0")
    return type(owner, (McpExtension,), namespace)()


def middleware_extension(case: Case) -> McpExtension:
    """An extension that only extends the case's tool by name with its middleware."""
    extensions = [ToolExtension(case.tool, middleware=layer) for layer in case.middleware]

    class Middlewares(McpExtension):
        def tool_extensions(self) -> list[ToolExtension]:
            return extensions

    return Middlewares()


def class_servable(case: Case) -> Any:
    """A ``Server`` class; served by a ``Platform`` when middleware must extend it."""
    server = class_tool_server(case)
    if case.middleware:
        return Platform([middleware_extension(case)], server=server)
    return server


def function_servable(case: Case) -> Platform:
    extensions = [function_tool_extension(case)]
    if case.middleware:
        extensions.append(middleware_extension(case))
    return Platform(extensions)


SIDES: dict[str, Callable[[Case], Any]] = {"class": class_servable, "function": function_servable}

# -- what a client sees, normalised --------------------------------------------------------


def normalise_result(message: Mapping[str, Any]) -> dict[str, Any]:
    """A ``tools/call`` response as comparable data: a protocol error's code and message,
    or the result (``isError``, content, ``structuredContent``, ``_meta``) with incident
    ids replaced and the server's identity left out."""
    if "error" in message:
        error = message["error"]
        return {"error": {"code": error["code"], "message": error["message"]}}
    result = json.loads(json.dumps(message["result"]))
    meta = dict(result.pop("_meta", None) or {})
    meta.pop(SERVER_INFO, None)
    if "incident" in meta:
        meta["incident"] = "<incident>"
    if meta:
        result["_meta"] = meta
    for block in result.get("content") or []:
        if isinstance(block.get("text"), str):
            block["text"] = INCIDENT.sub("<incident>", block["text"])
    return dict(result)


def without_structured_content_text(result: Mapping[str, Any]) -> dict[str, Any]:
    """``result`` without the content of a successful structured result: the text rendering
    of ``structuredContent``, compared on its own (``test_content_matches``)."""
    if "structuredContent" in result and not result.get("isError"):
        return {key: value for key, value in result.items() if key != "content"}
    return dict(result)


def kind_of(normalised: Mapping[str, Any]) -> Expect:
    """The outcome class of a normalised result (what ``Call.expect`` names)."""
    if "error" in normalised:
        code = normalised["error"]["code"]
        if code == -32602 and normalised["error"]["message"].startswith("Unknown tool"):
            return "unknown"
        if code == -32003:
            return "forbidden"
        raise AssertionError(f"unexpected protocol error {normalised}")
    if not normalised.get("isError"):
        return "ok"
    text = normalised["content"][0]["text"]
    if text.startswith("Invalid tool arguments\n"):
        return "invalid"
    if text == "Tool execution failed (incident <incident>)":
        assert normalised["_meta"]["incident"] == "<incident>"
        return "failed"
    return "tool-error"


def normalise_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A ``tools/list`` entry without its input model's name (``XInput`` / ``xArguments``)."""
    value = json.loads(json.dumps(entry))
    value["inputSchema"].pop("title", None)
    return dict(value)


@dataclass
class Observation:
    """What one side answered in one era: each call, the listing, the journal."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    listed: list[dict[str, Any]] = field(default_factory=list)
    journal: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


_OBSERVED: dict[tuple[str, str, str], Observation] = {}


async def observe(case: Case, side: str, era: str) -> Observation:
    """``serve(case, side, era)``, once per session: the call, content and listing tests
    of a case read the same observation (a copy of it)."""
    key = (case.id, side, era)
    if key not in _OBSERVED:
        _OBSERVED[key] = await serve(case, side, era)
    return copy.deepcopy(_OBSERVED[key])


async def serve(case: Case, side: str, era: str) -> Observation:
    """Serve ``case`` as ``side`` in ``era`` from a fresh container; list, then call."""
    container = new_container()
    client = McpTestClient(
        container,
        SIDES[side](case),
        protocol=era,  # type: ignore[arg-type]
        identity=case.identity,
    )
    observed = Observation()
    listing = await client.list_tools()
    assert listing.result is not None, listing.message
    observed.listed = [normalise_entry(entry) for entry in listing.result["tools"]]
    for call in case.calls:
        observed.calls.append(
            normalise_result((await client.tool(case.tool, call.arguments)).message)
        )
    observed.journal = list(container.get(Journal).events)
    return observed


def differences(left: Any, right: Any, path: str = "") -> list[str]:
    """Every path where ``left`` and ``right`` differ, with both values."""
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        found: list[str] = []
        for key in sorted(set(left) | set(right), key=str):
            here = f"{path}.{key}" if path else str(key)
            if key not in left:
                found.append(f"{here}: only in function: {right[key]!r}")
            elif key not in right:
                found.append(f"{here}: only in class: {left[key]!r}")
            else:
                found.extend(differences(left[key], right[key], here))
        return found
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        return [
            d
            for i, (a, b) in enumerate(zip(left, right, strict=True))
            for d in differences(a, b, f"{path}[{i}]")
        ]
    if left != right or type(left) is not type(right):
        return [f"{path}: class {left!r} != function {right!r}"]
    return []


def assert_same(class_side: Any, function_side: Any, what: str) -> None:
    found = differences(class_side, function_side)
    assert not found, f"{what}: the class tool and the function tool differ:\n" + "\n".join(
        f"  {line}" for line in found
    )


def check_expectations(case: Case, observed: Observation, side: str) -> None:
    """Each call's outcome is the one the case names, so both sides cannot pass broken."""
    kinds = [kind_of(result) for result in observed.calls]
    wanted = [call.expect for call in case.calls]
    assert kinds == wanted, f"{side} side of {case.id}: outcomes {kinds}, expected {wanted}"
    listed = [entry["name"] for entry in observed.listed]
    assert listed == ([case.tool] if case.listed else []), f"{side} side lists {listed}"
    opened = [e.split()[-1] for e in observed.journal if e.startswith("open ")]
    closed = [e.split()[-1] for e in observed.journal if e.startswith(("commit ", "rollback "))]
    assert closed == opened, (
        f"{side} side: each unit's finalizer once, in order: {observed.journal}"
    )
    if "unit" in case.inject or any("unit" in str(m.__annotations__) for m in case.middleware):
        # every call a handler was planned for (hidden or refused tools and invalid
        # arguments build no service)
        ran = sum(1 for call in case.calls if call.expect != "invalid") if case.listed else 0
        ran = ran if case.handler_calls is None else case.handler_calls
        assert len(opened) == ran, f"{side} side: {len(opened)} units for {ran} calls"


__all__ = [
    "ERAS",
    "Expect",
    "LEGACY",
    "MODERN",
    "REQUIRED",
    "Arg",
    "Call",
    "Case",
    "Features",
    "Hook",
    "Journal",
    "Observation",
    "Scoped",
    "Single",
    "Unit",
    "as_text",
    "assert_same",
    "check_expectations",
    "class_servable",
    "class_tool_server",
    "describe",
    "differences",
    "without_structured_content_text",
    "function_servable",
    "function_tool_extension",
    "input_model",
    "kind_of",
    "new_container",
    "normalise_entry",
    "normalise_result",
    "observe",
    "params",
]
