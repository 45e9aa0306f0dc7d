"""One server for the cases that share a server configuration: each case's component,
declared the way its dimensions say, beside a ``probe`` tool that reports what the layers
saw and an ``open_handle`` tool that mints state handles.

Every component answers a ``Reply`` naming its case, the value it was given, the word the
client answered (input), the stamp a request-stage layer gave its scope and how many times
its handle's session counter was bumped (state). A tool answers it as structured content
(and its JSON text); a resource and a prompt as JSON text.
"""

from __future__ import annotations

import json
import logging
import types as types_module
from collections import Counter as Tally
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

import pydantic

from container import Container, Lifetime
from mcp_adapter import (
    Call,
    Elicit,
    McpExtension,
    McpRequest,
    McpResponse,
    Next,
    Platform,
    PluginManifest,
    Prompt,
    PromptArgument,
    Resolve,
    Resource,
    Server,
    StateHandle,
    StateHandles,
    Tool,
    ToolSpec,
    request_stage,
    tool,
)
from mcp_adapter.declare.tasks import Tasks
from mcp_adapter.layers import (
    AccessLog,
    AccessRecord,
    InMemoryRateStore,
    Rate,
    RateLimit,
    RateStore,
    ResponseLimit,
    Timing,
)
from schemas import Schema
from tests.composition.cases import Case
from tests.parity.kit import SELF, _function, _positional

RESPONSE_LIMIT = 4000
"""ResponseLimit's bytes: every normal answer is far below, ``BIG`` far above."""
BIG = "x" * (RESPONSE_LIMIT + 1000)
STAMP = "stamped by the request stage"
WORD = "yes"


class Reply(Schema):
    case: str
    value: str
    answer: str = ""
    stamp: str = ""
    count: int = 0


class Answer(Schema):
    word: str


def question(case: Case) -> str:
    return f"{case.name}: pick a word"


@dataclass(frozen=True)
class Stamp:
    """A context value the request-stage layer gives each call's scope."""

    value: str


class Counter:
    """A session service of the handle's session: counts the calls that carried it."""

    def __init__(self, handle: StateHandle) -> None:
        self.handle = handle
        self.count = 0


@dataclass
class Observed:
    """What the layers saw, per component (a singleton the ``probe`` reads)."""

    access: list[tuple[str, str | None, str]] = field(default_factory=list)
    journal: list[str] = field(default_factory=list)
    hits: Tally[str] = field(default_factory=Tally)


# -- layers ----------------------------------------------------------------------------------


@request_stage(provides=[Stamp])
async def stamping(call: Call, call_next: Next) -> Any:
    return await call_next(call.with_context({Stamp: Stamp(STAMP)}))


async def journaling(call: Call, call_next: Next, observed: Observed) -> Any:
    """A call-stage layer: notes each component call that reaches the handler's stage."""
    observed.journal.append(call.component or "")
    return await call_next(call)


class _Keep(logging.Handler):
    def __init__(self, observed: Observed) -> None:
        super().__init__()
        self.observed = observed

    def emit(self, record: logging.LogRecord) -> None:
        access = AccessRecord.of(record)
        self.observed.access.append((access.method, access.component, access.outcome))


class Recorded:
    """The real rate store (memory or Redis), noting each key it counted."""

    def __init__(self, store: RateStore, observed: Observed) -> None:
        self.store = store
        self.observed = observed

    async def hit(self, key: str, rate: Rate, now: float) -> float | None:
        self.observed.hits[key] += 1
        return await self.store.hit(key, rate, now)


def per_component(request: McpRequest) -> str:
    """RateLimit's key: the component asked for (a resource: the start of its URIs), so each
    case counts apart."""
    if request.uri is not None:
        return request.uri.rpartition("/")[0] + "/"
    return str(request.params.get("name") or request.method)


LAYERS: dict[str, tuple[Any, ...]] = {
    "none": (),
    "request": (stamping,),
    "call": (journaling,),
    "access_log": (AccessLog,),
    "timing": (Timing,),
    "rate_limit": (RateLimit,),
    "response_limit": (ResponseLimit,),
}


def container_for(name: str, redis_url: str | None) -> Container:
    """The services every component and layer of the server ``name`` may take."""
    container = Container()
    observed = Observed()
    container.instance(Observed, observed)
    container.context(Stamp)
    container.bind(Counter, Counter, Lifetime.SESSION)
    container.instance(Timing, Timing())
    logger = logging.getLogger(f"composition.access.{name}")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    logger.handlers[:] = [_Keep(observed)]
    container.instance(AccessLog, AccessLog(logger=logger))
    store: RateStore = InMemoryRateStore()
    if redis_url is not None:
        from mcp_adapter.stores import SharedRedis

        store = SharedRedis.of(redis_url).for_server(name).rate_store()
    limit = RateLimit(10_000, 60.0, per=per_component, store=Recorded(store, observed))
    container.instance(RateLimit, limit)
    container.instance(ResponseLimit, ResponseLimit(RESPONSE_LIMIT))
    return container


# -- the probe and the handle opener -----------------------------------------------------------


class ProbeInput(Schema):
    method: str
    component: str


class Observation(Schema):
    access: list[str]
    journal: int
    durations: int
    hits: int


class Probe(Tool[ProbeInput, Observation]):
    """What the layers saw of one component."""

    name = "probe"

    async def handle(self, payload: ProbeInput, observed: Observed, timing: Timing) -> McpResponse:
        wanted = (payload.method, payload.component)
        rate_key = payload.component.partition("{")[0]  # a resource: its URIs' common start
        return McpResponse.structured(
            Observation(
                access=[outcome for m, c, outcome in observed.access if (m, c) == wanted],
                journal=observed.journal.count(payload.component),
                durations=len(timing.durations(*wanted)),
                hits=sum(n for key, n in observed.hits.items() if key.endswith(rate_key)),
            )
        )


class OpenHandle(Tool):
    """Mints a state handle."""

    name = "open_handle"

    async def handle(self, handles: StateHandles) -> McpResponse:
        return McpResponse.text(handles.open())


# -- each case's component -----------------------------------------------------------------------


def _reply(case: Case, value: str, args: dict[str, Any]) -> Reply | McpResponse:
    word = ""
    if case.input == "resolver":
        word = args["answer"].word
    elif case.input == "elicit":
        answer = args["request"].input_responses.get("word")
        if answer is None:
            return McpResponse.elicit(question(case), Answer, key="word")
        word = answer.get("content", {}).get("word", answer.get("action", ""))
    count = 0
    if "counter" in args:
        args["counter"].count += 1
        count = args["counter"].count
    stamp = args["stamp"].value if "stamp" in args else ""
    return Reply(case=case.name, value=value, answer=word, stamp=stamp, count=count)


def _asker(case: Case) -> Callable[..., Any]:
    async def ask() -> Elicit[Answer]:
        return Elicit(question(case), Answer)

    ask.__name__ = ask.__qualname__ = f"ask_{case.name}"
    return ask


def _extras(case: Case) -> list[Any]:
    """The parameters a case's handler takes besides its arguments."""
    extras = []
    if case.layers == "request":
        extras.append(_positional("stamp", Stamp))
    if case.input == "resolver":
        extras.append(_positional("answer", Annotated[Answer, Resolve(_asker(case))]))
    if case.input == "elicit":
        extras.append(_positional("request", McpRequest))
    if case.state == "handle":
        extras.append(_positional("counter", Counter))
    return extras


def _arguments(case: Case) -> dict[str, Any]:
    """What a client passes: a value, and the handle when the case has state."""
    return {"value": str, **({"handle": StateHandle} if case.state == "handle" else {})}


def _input_model(case: Case) -> type[Schema]:
    fields: dict[str, Any] = {name: (t, ...) for name, t in _arguments(case).items()}
    made: type[Schema] = pydantic.create_model(f"{case.name}Input", __base__=Schema, **fields)
    return made


def _as_text(value: Reply | McpResponse) -> McpResponse:
    return value if isinstance(value, McpResponse) else McpResponse.text(value.model_dump_json())


def class_tool(case: Case) -> type[Tool[Any, Any]]:
    model = _input_model(case)

    def run(args: dict[str, Any]) -> McpResponse:
        value = _reply(case, args["payload"].value, args)
        return value if isinstance(value, McpResponse) else McpResponse.structured(value)

    handle = _function(
        "handle",
        [SELF, _positional("payload", model), *_extras(case)],
        McpResponse,
        run,
        is_async=True,
        owner=case.name,
    )
    namespace = {"name": case.name, "task_support": _support(case), "handle": handle}
    namespace["__module__"] = __name__
    return types_module.new_class(
        case.name,
        (Tool[model, Reply],),  # type: ignore[valid-type]
        exec_body=lambda body: body.update(namespace),
    )


def _support(case: Case) -> str:
    return "forbidden" if case.execution == "inline" else case.execution.removeprefix("task_")


def _function_tool(case: Case, *, method: bool) -> Callable[..., Any]:
    def run(args: dict[str, Any]) -> Reply | McpResponse:
        return _reply(case, args["value"], args)

    arguments = [_positional(name, annotation) for name, annotation in _arguments(case).items()]
    parameters = [*([SELF] if method else []), *arguments, *_extras(case)]
    return _function(case.name, parameters, Reply, run, is_async=True, doc=f"Case {case.name}.")


def _handler(case: Case) -> Any:
    def run(args: dict[str, Any]) -> McpResponse:
        return _as_text(_reply(case, args["value"], args))

    parameters = [SELF, _positional("value", str), *_extras(case)]
    return _function("handle", parameters, McpResponse, run, is_async=True, owner=case.name)


def resource(case: Case) -> type[Resource]:
    namespace: dict[str, Any] = {
        "name": case.name,
        "uri_template": uri_template(case),
        "mime_type": "application/json",
        "handle": _handler(case),
        "__module__": __name__,
    }
    if case.execution != "inline":  # not the API (CONSTRAINTS): nothing reads it
        namespace["task_support"] = _support(case)
    return type(case.name, (Resource,), namespace)


def prompt(case: Case) -> type[Prompt]:
    namespace: dict[str, Any] = {
        "name": case.name,
        "arguments": (PromptArgument(name="value", required=True),),
        "handle": _handler(case),
        "__module__": __name__,
    }
    if case.execution != "inline":
        namespace["task_support"] = _support(case)
    return type(case.name, (Prompt,), namespace)


def uri_template(case: Case) -> str:
    return f"case://{case.name}/{{value}}"


def extension(name: str, cases: Sequence[Case]) -> McpExtension:
    """The ``@tool`` methods and ``ToolSpec`` tools of ``cases``, as one extension."""
    namespace: dict[str, Any] = {"__module__": __name__}
    specs = []
    for case in cases:
        if case.component == "decorator":
            namespace[case.name] = tool(task_support=_support(case))(  # type: ignore[call-overload]
                _function_tool(case, method=True)
            )
        elif case.component == "spec":
            specs.append(
                ToolSpec(
                    name=case.name,
                    handler=_function_tool(case, method=False),
                    task_support=_support(case),  # type: ignore[arg-type]
                )
            )

    def manifest(self: McpExtension) -> PluginManifest:
        return PluginManifest(name=f"{name}-tools", version="1.0.0")

    def tools(self: McpExtension) -> list[ToolSpec]:
        return [*McpExtension.tools(self), *specs]

    namespace.update(manifest=manifest, tools=tools)
    made: type[McpExtension] = type(f"{name}Extension", (McpExtension,), namespace)
    return made()


def server_name(group: Iterable[str]) -> str:
    return "composition-" + "-".join(group)


def platform_for(
    cases: Sequence[Case],
    name: str,
    redis_url: str | None,
    layers: str,
    *,
    scaffolding: bool = True,
) -> Platform:
    """The server of ``cases`` (which share ``layers``), with the probe and the opener
    unless ``scaffolding`` is false."""
    tasks = Tasks() if redis_url is None else Tasks(url=redis_url, name=f"{name}:tasks")
    namespace: dict[str, Any] = {
        "name": name,
        "tools": (
            *(class_tool(case) for case in cases if case.component == "class"),
            *((Probe, OpenHandle) if scaffolding else ()),
        ),
        "resources": tuple(resource(case) for case in cases if case.component == "resource"),
        "prompts": tuple(prompt(case) for case in cases if case.component == "prompt"),
        "middleware": LAYERS[layers],
        "tasks": tasks,
        "__module__": __name__,
    }
    server = type(f"{name}Server", (Server,), namespace)
    return Platform([extension(name, cases)], server=server)


def cases_json(cases: Sequence[Case]) -> str:
    return json.dumps(
        [{"number": c.number, **c.values, "constrained": c.constrained} for c in cases]
    )


def cases_of(text: str) -> list[Case]:
    return [Case(**values) for values in json.loads(text)]
