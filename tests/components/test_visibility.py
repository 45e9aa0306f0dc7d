"""shouldRegister/authorize for tools, resources, templates and prompts: every combination.

shouldRegister false: not listed, and a direct request answers exactly what a server
without the component answers. authorize false: not listed, and a direct request is an
authorization error (-32003). Neither ever lets the handler run.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import mcp
import pytest
from mcp import types

from container import Container
from mcp_adapter import McpRequest, McpResponse, Prompt, PromptArgument, Resource, Server, Tool
from mcp_adapter.errors import AUTHORIZATION_ERROR, RESOURCE_NOT_FOUND
from mcp_adapter.testing import McpTestClient
from schemas import Schema
from tests.components.support import ERAS, SDK_MODES, sdk_client

pytestmark = pytest.mark.anyio

KINDS = ("tool", "resource", "template", "prompt")
DECISIONS = (None, True, False)
"""``None``: the hook is not defined at all."""
STYLES = ("sync", "async")


class Policy:
    """A service every hook gets injected; it records who asked what."""

    def __init__(self) -> None:
        self.hooks: list[tuple[str, str]] = []
        self.handled = 0


class VisInput(Schema):
    text: str


class VisTool(Tool[VisInput]):
    """The base of the generated tools (``type()`` cannot subclass ``Tool[VisInput]``)."""


def _hooks(should: bool | None, auth: bool | None, style: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    if style == "sync":

        def should_register(self: Any, request: McpRequest, policy: Policy) -> bool:
            policy.hooks.append(("shouldRegister", request.method))
            return bool(should)

        def authorize(self: Any, request: McpRequest, policy: Policy) -> bool:
            policy.hooks.append(("authorize", request.method))
            return bool(auth)

    else:

        async def should_register(self: Any, request: McpRequest, policy: Policy) -> bool:
            policy.hooks.append(("shouldRegister", request.method))
            return bool(should)

        async def authorize(self: Any, request: McpRequest, policy: Policy) -> bool:
            policy.hooks.append(("authorize", request.method))
            return bool(auth)

    if should is not None:
        namespace["shouldRegister"] = should_register
    if auth is not None:
        namespace["authorize"] = authorize
    return namespace


def make(kind: str, should: bool | None, auth: bool | None, style: str) -> type:
    """The component under test, named ``guarded`` whatever its kind."""
    namespace = _hooks(should, auth, style)
    if kind == "tool":

        async def handle_tool(self: Any, payload: VisInput, policy: Policy) -> McpResponse:
            policy.handled += 1
            return McpResponse.text(payload.text)

        return type(
            "GuardedTool", (VisTool,), {"name": "guarded", "handle": handle_tool, **namespace}
        )
    if kind in ("resource", "template"):

        def handle_resource(self: Any, policy: Policy, id: int = 0) -> McpResponse:
            policy.handled += 1
            return McpResponse.text(f"resource {id}")

        where = {"uri": "vis://guarded"} if kind == "resource" else {"uri_template": "vis://g/{id}"}
        return type(
            "GuardedResource",
            (Resource,),
            {"name": "guarded", **where, "handle": handle_resource, **namespace},
        )

    async def handle_prompt(self: Any, topic: str, policy: Policy) -> McpResponse:
        policy.handled += 1
        return McpResponse.text(topic)

    return type(
        "GuardedPrompt",
        (Prompt,),
        {
            "name": "guarded",
            "arguments": (PromptArgument(name="topic", required=True),),
            "handle": handle_prompt,
            **namespace,
        },
    )


class OtherTool(Tool):
    name = "other"

    async def handle(self) -> McpResponse:
        return McpResponse.text("other")


class OtherResource(Resource):
    name = "other"
    uri = "vis://other"

    def handle(self) -> McpResponse:
        return McpResponse.text("other")


class OtherPrompt(Prompt):
    name = "other"

    def handle(self) -> McpResponse:
        return McpResponse.text("other")


def server(component: type | None = None) -> type[Server]:
    """A server with one unguarded component of each kind, plus ``component``."""
    extra: tuple[type, ...] = () if component is None else (component,)
    tools = (OtherTool, *(c for c in extra if issubclass(c, Tool)))
    resources = (OtherResource, *(c for c in extra if issubclass(c, Resource)))
    prompts = (OtherPrompt, *(c for c in extra if issubclass(c, Prompt)))
    return type("Guarded", (Server,), {"tools": tools, "resources": resources, "prompts": prompts})


LIST_METHOD = {
    "tool": "tools/list",
    "resource": "resources/list",
    "template": "resources/templates/list",
    "prompt": "prompts/list",
}
LIST_FIELD = {
    "tool": "tools",
    "resource": "resources",
    "template": "resourceTemplates",
    "prompt": "prompts",
}
CALL = {
    "tool": ("tools/call", {"name": "guarded", "arguments": {"text": "hi"}}),
    "resource": ("resources/read", {"uri": "vis://guarded"}),
    "template": ("resources/read", {"uri": "vis://g/7"}),
    "prompt": ("prompts/get", {"name": "guarded", "arguments": {"topic": "hi"}}),
}
BAD_CALL = {
    "tool": ("tools/call", {"name": "guarded", "arguments": {"wrong": 1}}),
    "resource": ("resources/read", {"uri": "vis://guarded"}),  # nothing to get wrong
    "template": ("resources/read", {"uri": "vis://g/not-a-number"}),
    "prompt": ("prompts/get", {"name": "guarded", "arguments": {"unknown": "x"}}),
}
KIND_WORD = {"tool": "tool", "resource": "resource", "template": "resource", "prompt": "prompt"}


@dataclass
class Case:
    kind: str
    should: bool | None
    auth: bool | None
    style: str
    policy: Policy = field(default_factory=Policy)

    @property
    def registered(self) -> bool:
        return self.should is not False

    @property
    def allowed(self) -> bool:
        return self.registered and self.auth is not False

    def container(self) -> Container:
        container = Container()
        container.instance(Policy, self.policy)
        return container

    def client(self, era: str) -> McpTestClient:
        return McpTestClient(
            self.container(),
            server(make(self.kind, self.should, self.auth, self.style)),
            protocol=era,
        )

    def absent(self, era: str) -> McpTestClient:
        return McpTestClient(self.container(), server(), protocol=era)


def cases() -> Iterator[Any]:
    for kind, should, auth, style in itertools.product(KINDS, DECISIONS, DECISIONS, STYLES):
        if style == "async" and should is None and auth is None:
            continue  # no hook, nothing async about it
        label = f"{kind}-register:{should}-authorize:{auth}-{style}"
        yield pytest.param(kind, should, auth, style, id=label)


def listed_names(result: Any, kind: str) -> list[str]:
    assert result.result is not None, result.message
    return [entry["name"] for entry in result.result[LIST_FIELD[kind]]]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(("kind", "should", "auth", "style"), list(cases()))
async def test_listing_and_direct_request(
    era: str, kind: str, should: bool | None, auth: bool | None, style: str
) -> None:
    case = Case(kind, should, auth, style)
    client = case.client(era)

    listing = await client.request(LIST_METHOD[kind], {})
    expected_listing = ["other", "guarded"] if case.allowed else ["other"]
    if kind == "template":
        expected_listing = ["guarded"] if case.allowed else []
    assert listed_names(listing, kind) == expected_listing

    method, params = CALL[kind]
    direct = await client.request(method, params)
    if not case.registered:
        absent = await case.absent(era).request(method, params)
        assert absent.error is not None
        assert direct.error == absent.error
    elif not case.allowed:
        assert direct.error == {
            "code": AUTHORIZATION_ERROR,
            "message": f"Not authorized to use {KIND_WORD[kind]} guarded",
        }
    else:
        direct.assertOk()
    assert case.policy.handled == (1 if case.allowed else 0)

    # Hooks ran once for the listing and once for the request, with injection,
    # shouldRegister first; authorize is not asked once shouldRegister said no.
    per_request = [
        hook
        for hook, decision in (("shouldRegister", should), ("authorize", auth))
        if decision is not None
    ]
    if should is False:
        per_request = ["shouldRegister"]
    assert case.policy.hooks == [(h, LIST_METHOD[kind]) for h in per_request] + [
        (h, method) for h in per_request
    ]


def bad_cases() -> Iterator[Any]:
    for kind, should, auth in itertools.product(KINDS, DECISIONS, DECISIONS):
        if kind == "resource" or (should is not False and auth is not False):
            continue
        label = f"{kind}-register:{should}-authorize:{auth}"
        yield pytest.param(kind, should, auth, id=label)


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(("kind", "should", "auth"), list(bad_cases()))
async def test_hidden_or_forbidden_wins_over_invalid_input(
    era: str, kind: str, should: bool | None, auth: bool | None
) -> None:
    """Invalid input to a hidden component must not reveal that it exists."""
    case = Case(kind, should, auth, "sync")
    method, params = BAD_CALL[kind]
    direct = await case.client(era).request(method, params)
    if not case.registered:
        absent = await case.absent(era).request(method, params)
        assert direct.error == absent.error
    else:
        assert direct.error is not None
        assert direct.error["code"] == AUTHORIZATION_ERROR
    assert case.policy.handled == 0


@pytest.mark.parametrize("mode", SDK_MODES)
@pytest.mark.parametrize(("kind", "should", "auth", "style"), list(cases()))
async def test_the_sdk_client_sees_the_same(
    mode: str, kind: str, should: bool | None, auth: bool | None, style: str
) -> None:
    case = Case(kind, should, auth, style)
    component = make(kind, should, auth, style)
    async with sdk_client(server(component), case.container(), mode) as sdk:
        if kind == "tool":
            names = [t.name for t in (await sdk.list_tools()).tools]
        elif kind == "resource":
            names = [r.name for r in (await sdk.list_resources()).resources]
        elif kind == "template":
            names = [t.name for t in (await sdk.list_resource_templates()).resource_templates]
        else:
            names = [p.name for p in (await sdk.list_prompts()).prompts]
        assert ("guarded" in names) is case.allowed

        async def direct() -> Any:
            if kind == "tool":
                return await sdk.call_tool("guarded", {"text": "hi"})
            if kind == "resource":
                return await sdk.read_resource("vis://guarded")
            if kind == "template":
                return await sdk.read_resource("vis://g/7")
            return await sdk.get_prompt("guarded", {"topic": "hi"})

        if case.allowed:
            await direct()
        else:
            with pytest.raises(mcp.MCPError) as raised:
                await direct()
            if not case.registered:
                legacy_resource = kind in ("resource", "template") and mode == "legacy"
                expected = RESOURCE_NOT_FOUND if legacy_resource else types.INVALID_PARAMS
                assert raised.value.code == expected
            else:
                assert raised.value.code == AUTHORIZATION_ERROR
    assert case.policy.handled == (1 if case.allowed else 0)


# -- completion never reaches a hidden component ---------------------------------------------------


def completing(kind: str, should: bool | None, auth: bool | None) -> type:
    component = make(kind, should, auth, "sync")

    def complete(self: Any, value: str, policy: Policy) -> list[str]:
        policy.hooks.append(("complete", value))
        return [value + "!"]

    return type(component.__name__, (component,), {"complete": complete})


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("kind", ["template", "prompt"])
@pytest.mark.parametrize(("should", "auth"), [(None, None), (False, None), (None, False)])
async def test_completion_of_a_hidden_component_is_empty(
    era: str, kind: str, should: bool | None, auth: bool | None
) -> None:
    case = Case(kind, should, auth, "sync")
    client = McpTestClient(case.container(), server(completing(kind, should, auth)), protocol=era)
    ref = (
        {"type": "ref/prompt", "name": "guarded"}
        if kind == "prompt"
        else {"type": "ref/resource", "uri": "vis://g/{id}"}
    )
    result = await client.request(
        "completion/complete", {"ref": ref, "argument": {"name": "topic", "value": "a"}}
    )
    assert result.result is not None, result.message
    values = result.result["completion"]["values"]
    if case.allowed:
        assert values == ["a!"]
        assert ("complete", "a") in case.policy.hooks
    else:
        assert values == []
        assert ("complete", "a") not in case.policy.hooks


# -- each listing runs in its own scope, whose finalizers run --------------------------------------


class Session:
    """A scoped service with a finalizer: opened per scope, closed when the scope ends."""

    opened: ClassVar[int] = 0

    def __init__(self, log: list[tuple[str, int]]) -> None:
        Session.opened += 1
        self.number = Session.opened
        self.log = log


def session_container(log: list[tuple[str, int]]) -> Container:
    def open_session() -> Iterator[Session]:
        session = Session(log)
        log.append(("open", session.number))
        yield session
        log.append(("close", session.number))

    container = Container()
    container.scoped(Session, open_session)
    return container


def session_component(kind: str, index: int, *, fail: bool = False) -> type:
    def should_register(self: Any, session: Session) -> bool:
        session.log.append((f"hook{index}", session.number))
        if fail:
            raise RuntimeError("the policy store is down")
        return True

    base: dict[str, Any] = {"name": f"c{index}", "shouldRegister": should_register}
    if kind == "tool":
        return type(f"T{index}", (OtherTool,), base)
    if kind == "resource":
        return type(f"R{index}", (OtherResource,), {**base, "uri": f"vis://c{index}"})
    if kind == "template":

        def handle(self: Any, id: str) -> McpResponse:
            return McpResponse.text(id)

        return type(
            f"Tm{index}",
            (Resource,),
            {**base, "uri_template": f"vis://c{index}/{{id}}", "handle": handle},
        )
    return type(f"P{index}", (OtherPrompt,), base)


def session_server(kind: str, *, fail: bool = False) -> type[Server]:
    components = tuple(session_component(kind, i, fail=fail and i == 1) for i in range(3))
    attribute = {"tool": "tools", "prompt": "prompts"}.get(kind, "resources")
    return type("Sessions", (Server,), {attribute: components})


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("kind", KINDS)
async def test_each_listing_has_its_own_scope_and_closes_it(era: str, kind: str) -> None:
    log: list[tuple[str, int]] = []
    client = McpTestClient(session_container(log), session_server(kind), protocol=era)
    first = await client.request(LIST_METHOD[kind], {})
    assert listed_names(first, kind) == ["c0", "c1", "c2"]
    (_, one) = log[0]
    assert log == [("open", one), ("hook0", one), ("hook1", one), ("hook2", one), ("close", one)]
    log.clear()
    await client.request(LIST_METHOD[kind], {})
    (_, two) = log[0]
    assert two != one
    assert log == [("open", two), ("hook0", two), ("hook1", two), ("hook2", two), ("close", two)]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("kind", KINDS)
async def test_a_failing_hook_fails_the_listing_and_still_closes_its_scope(
    era: str, kind: str
) -> None:
    log: list[tuple[str, int]] = []
    client = McpTestClient(session_container(log), session_server(kind, fail=True), protocol=era)
    result = await client.request(LIST_METHOD[kind], {})
    assert result.error is not None
    assert result.error["code"] == types.INTERNAL_ERROR
    assert result.error["message"].startswith("Listing failed (incident ")
    assert "policy store" not in result.error["message"]
    (_, number) = log[0]
    assert log == [("open", number), ("hook0", number), ("hook1", number), ("close", number)]


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_listing_scopes_through_the_sdk_client(mode: str) -> None:
    log: list[tuple[str, int]] = []
    async with sdk_client(session_server("tool"), session_container(log), mode) as sdk:
        await sdk.list_tools()
        await sdk.list_tools()
    opened = [n for event, n in log if event == "open"]
    closed = [n for event, n in log if event == "close"]
    assert len(opened) == 2
    assert opened == closed


class Built:
    """Counts constructions of the components below."""

    count: ClassVar[dict[str, int]] = {}


class WithHook(Tool):
    name = "with-hook"

    def __init__(self) -> None:
        Built.count["with-hook"] = Built.count.get("with-hook", 0) + 1

    def shouldRegister(self) -> bool:
        return True

    async def handle(self) -> McpResponse:
        return McpResponse.text("x")


class WithoutHook(Tool):
    name = "without-hook"

    def __init__(self) -> None:
        Built.count["without-hook"] = Built.count.get("without-hook", 0) + 1

    async def handle(self) -> McpResponse:
        return McpResponse.text("x")


class BuiltServer(Server):
    tools = (WithHook, WithoutHook)


@pytest.mark.parametrize("era", ERAS)
async def test_listings_build_only_the_components_that_have_hooks(era: str) -> None:
    Built.count.clear()
    client = McpTestClient(Container(), BuiltServer, protocol=era)
    for _ in range(3):
        result = await client.list_tools()
        assert listed_names(result, "tool") == ["with-hook", "without-hook"]
    assert Built.count == {"with-hook": 3}


class Checked(Tool):
    name = "checked"

    async def authorize(self, session: Session) -> bool:
        session.log.append(("authorize", session.number))
        return True

    async def handle(self, session: Session) -> McpResponse:
        session.log.append(("handle", session.number))
        return McpResponse.text(str(session.number))


class CheckedServer(Server):
    tools = (Checked,)


@pytest.mark.parametrize("era", ERAS)
async def test_a_call_shares_one_scope_between_hooks_and_handler(era: str) -> None:
    log: list[tuple[str, int]] = []
    client = McpTestClient(session_container(log), CheckedServer, protocol=era)
    (await client.tool("checked")).assertOk()
    (await client.tool("checked")).assertOk()
    (_, one), (_, two) = log[0], log[4]
    assert one != two
    assert log == [
        ("open", one),
        ("authorize", one),
        ("handle", one),
        ("close", one),
        ("open", two),
        ("authorize", two),
        ("handle", two),
        ("close", two),
    ]


# -- a hook that fails closes the door -----------------------------------------------------------


def raising(kind: str, hook: str) -> type:
    component = make(kind, None, None, "sync")

    def broken(self: Any, policy: Policy) -> bool:
        policy.hooks.append((hook, "raised"))
        raise RuntimeError("policy store unreachable")

    return type(component.__name__, (component,), {hook: broken})


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("hook", ["shouldRegister", "authorize"])
async def test_a_raising_hook_never_lets_the_request_through(
    era: str, kind: str, hook: str
) -> None:
    case = Case(kind, None, None, "sync")
    client = McpTestClient(case.container(), server(raising(kind, hook)), protocol=era)
    method, params = CALL[kind]
    result = await client.request(method, params)
    assert result.is_error
    if kind == "tool":
        result.assertError("Tool execution failed")
    else:
        assert result.error is not None
        assert result.error["code"] == types.INTERNAL_ERROR
    assert "unreachable" not in str(result.message)
    assert case.policy.hooks == [(hook, "raised")]
    assert case.policy.handled == 0
