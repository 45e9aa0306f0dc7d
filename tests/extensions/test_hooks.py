"""Visibility hooks of extension tools: ``ToolSpec(should_register=, authorize=)`` and
``@tool(should_register=, authorize=)``.

They behave as a class tool's ``shouldRegister``/``authorize``: should_register false
answers exactly as if the tool did not exist, authorize false is -32003, neither lets
the handler run; their parameters are injected and checked at compile time. Through
the host (``McpTestClient``), the SDK's ``mcp.Client`` on the host's server, and
``put_on_server`` onto ``MCPServer`` and the low-level ``Server``, in both eras.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import mcp
import pytest
from mcp import types
from mcp.server import Server as LowLevelServer
from mcp.server.mcpserver import MCPServer

from container import Container
from mcp_adapter import (
    CompileError,
    McpExtension,
    McpRequest,
    Platform,
    PluginManifest,
    ToolSpec,
    put_on_server,
    tool,
)
from mcp_adapter.compiled.catalog import Catalog
from mcp_adapter.errors import AUTHORIZATION_ERROR
from mcp_adapter.extensions import ToolExtension
from mcp_adapter.testing import McpTestClient
from tests.components.support import ERAS, SDK_MODES, sdk_client, signed_in
from tests.extensions.support import sdk_call, sdk_tools

pytestmark = pytest.mark.anyio

DECISIONS = (None, True, False)
"""``None``: the hook is not given at all."""
STYLES = ("sync", "async")


class Policy:
    """A service every hook and handler gets injected; records who asked what."""

    def __init__(self) -> None:
        self.hooks: list[tuple[str, str]] = []
        self.handled = 0


def hooks(should: bool | None, auth: bool | None, style: str) -> dict[str, Any]:
    """The ``ToolSpec`` hook fields for a case."""
    if style == "sync":

        def should_register(request: McpRequest, policy: Policy) -> bool:
            policy.hooks.append(("should_register", request.method))
            return bool(should)

        def authorize(request: McpRequest, policy: Policy) -> bool:
            policy.hooks.append(("authorize", request.method))
            return bool(auth)

    else:

        async def should_register(request: McpRequest, policy: Policy) -> bool:
            policy.hooks.append(("should_register", request.method))
            return bool(should)

        async def authorize(request: McpRequest, policy: Policy) -> bool:
            policy.hooks.append(("authorize", request.method))
            return bool(auth)

    chosen: dict[str, Any] = {}
    if should is not None:
        chosen["should_register"] = should_register
    if auth is not None:
        chosen["authorize"] = authorize
    return chosen


def guarded_spec(should: bool | None, auth: bool | None, style: str) -> ToolSpec:
    def guarded(text: str, policy: Policy) -> str:
        """Echo, when allowed."""
        policy.handled += 1
        return text

    return ToolSpec(name="guarded", handler=guarded, **hooks(should, auth, style))


def other() -> str:
    """An unguarded neighbour."""
    return "other"


OTHER = ToolSpec(name="other", handler=other)


class Offers(McpExtension):
    """Contributes the specs it is given."""

    def __init__(self, *specs: ToolSpec) -> None:
        self.specs = list(specs)

    def manifest(self) -> PluginManifest:
        return PluginManifest(name="offers", version="1.0.0")

    def tools(self) -> list[ToolSpec]:
        return self.specs


@dataclass
class Case:
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

    @property
    def spec(self) -> ToolSpec:
        return guarded_spec(self.should, self.auth, self.style)

    def container(self) -> Container:
        container = Container()
        container.instance(Policy, self.policy)
        return container

    def catalog(self, *, absent: bool = False) -> Catalog:
        specs = [OTHER] if absent else [OTHER, self.spec]
        return Platform([Offers(*specs)]).compile(self.container())

    def per_request(self) -> list[str]:
        """The hooks one request asks, in order."""
        if self.should is False:
            return ["should_register"]
        return [
            hook
            for hook, decision in (("should_register", self.should), ("authorize", self.auth))
            if decision is not None
        ]


def cases() -> Iterator[Any]:
    for should, auth, style in itertools.product(DECISIONS, DECISIONS, STYLES):
        if style == "async" and should is None and auth is None:
            continue
        yield pytest.param(should, auth, style, id=f"register:{should}-authorize:{auth}-{style}")


# -- the host -------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(("should", "auth", "style"), list(cases()))
async def test_listing_and_direct_call_through_the_host(
    era: str, should: bool | None, auth: bool | None, style: str
) -> None:
    case = Case(should, auth, style)
    client = McpTestClient(case.container(), case.catalog(), protocol=era)  # type: ignore[arg-type]

    listing = (await client.list_tools()).result
    assert listing is not None
    names = [entry["name"] for entry in listing["tools"]]
    assert names == (["other", "guarded"] if case.allowed else ["other"])

    direct = await client.tool("guarded", {"text": "hi"})
    if not case.registered:
        absent = McpTestClient(case.container(), case.catalog(absent=True), protocol=era)  # type: ignore[arg-type]
        expected = (await absent.tool("guarded", {"text": "hi"})).error
        assert expected == {"code": types.INVALID_PARAMS, "message": "Unknown tool: guarded"}
        assert direct.error == expected
    elif not case.allowed:
        assert direct.error == {
            "code": AUTHORIZATION_ERROR,
            "message": "Not authorized to use tool guarded",
        }
    else:
        assert direct.texts == ["hi"]
    assert case.policy.handled == (1 if case.allowed else 0)
    hooks_asked = case.per_request()
    assert case.policy.hooks == [(h, "tools/list") for h in hooks_asked] + [
        (h, "tools/call") for h in hooks_asked
    ]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(("should", "auth"), [(False, None), (None, False), (True, False)])
async def test_hidden_or_forbidden_wins_over_invalid_arguments(
    era: str, should: bool | None, auth: bool | None
) -> None:
    case = Case(should, auth, "sync")
    client = McpTestClient(case.container(), case.catalog(), protocol=era)  # type: ignore[arg-type]
    direct = await client.tool("guarded", {"wrong": 1})
    assert direct.error is not None
    if case.registered:
        assert direct.error["code"] == AUTHORIZATION_ERROR
    else:
        assert direct.error == {"code": types.INVALID_PARAMS, "message": "Unknown tool: guarded"}
    assert case.policy.handled == 0


# -- the SDK's own client on the host's server ------------------------------------------------


@pytest.mark.parametrize("mode", SDK_MODES)
@pytest.mark.parametrize(("should", "auth", "style"), list(cases()))
async def test_the_sdk_client_sees_the_same(
    mode: str, should: bool | None, auth: bool | None, style: str
) -> None:
    case = Case(should, auth, style)
    async with sdk_client(case.catalog(), case.container(), mode) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == (["other", "guarded"] if case.allowed else ["other"])
        if case.allowed:
            result = await client.call_tool("guarded", {"text": "hi"})
            assert result.structured_content in ("hi", {"result": "hi"})  # 2025-11-25 wraps
        else:
            with pytest.raises(mcp.MCPError) as raised:
                await client.call_tool("guarded", {"text": "hi"})
            expected = types.INVALID_PARAMS if not case.registered else AUTHORIZATION_ERROR
            assert raised.value.code == expected
    assert case.policy.handled == (1 if case.allowed else 0)


# -- put_on_server -----------------------------------------------------------------------------


def _previous_handlers() -> LowLevelServer[Any]:
    echo = types.Tool(name="echo", input_schema={"type": "object"})

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[echo])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name != "echo":
            message = f"the earlier handler does not know {params.name}"
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=message)], is_error=True
            )
        return types.CallToolResult(content=[types.TextContent(type="text", text="echo")])

    return LowLevelServer("mixed", on_list_tools=list_tools, on_call_tool=call_tool)


TARGETS: dict[str, Callable[[], Any]] = {
    "mcpserver": lambda: MCPServer("probe"),
    "low-level": lambda: LowLevelServer("probe"),
    "low-level-with-handlers": _previous_handlers,
}


@pytest.mark.parametrize("mode", SDK_MODES)
@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize(
    ("should", "auth", "style"),
    [
        pytest.param(False, None, "sync", id="hidden-sync"),
        pytest.param(False, True, "async", id="hidden-async"),
        pytest.param(True, False, "sync", id="forbidden-sync"),
        pytest.param(None, False, "async", id="forbidden-async"),
        pytest.param(True, True, "async", id="allowed"),
    ],
)
async def test_put_on_server_honours_the_hooks(
    mode: str, target: str, should: bool | None, auth: bool | None, style: str
) -> None:
    case = Case(should, auth, style)
    server = TARGETS[target]()
    put_on_server(server, [OTHER, case.spec], case.container())
    absent = TARGETS[target]()
    put_on_server(absent, [OTHER], case.container())

    names = [entry["name"] for entry in await sdk_tools(server, mode)]
    expected_names = [entry["name"] for entry in await sdk_tools(absent, mode)]
    if case.allowed:
        expected_names.append("guarded")
    assert names == expected_names

    answer = await sdk_call(server, "guarded", {"text": "hi"}, mode)
    if not case.registered:
        assert answer == await sdk_call(absent, "guarded", {"text": "hi"}, mode)
    elif not case.allowed:
        assert answer == {
            "error": {"code": AUTHORIZATION_ERROR, "message": "Not authorized to use tool guarded"}
        }
    else:
        assert answer["structuredContent"] in ("hi", {"result": "hi"})
    assert case.policy.handled == (1 if case.allowed else 0)


async def test_hidden_on_mcpserver_answers_as_its_unknown_names_do() -> None:
    case = Case(False, None, "sync")
    server = MCPServer("probe")
    put_on_server(server, [case.spec], case.container())
    for mode in SDK_MODES:
        hidden = await sdk_call(server, "guarded", {"text": "hi"}, mode)
        assert hidden == await sdk_call(server, "nope", {}, mode) | {
            "content": [{"type": "text", "text": "Unknown tool: guarded"}]
        }
        assert hidden["isError"] is True
    # In process, outside a request, MCPServer's own API answers as for an unknown name too.
    with pytest.raises(Exception, match="Unknown tool: guarded"):
        await server.call_tool("guarded", {"text": "hi"})


# -- @tool on an extension -----------------------------------------------------------------


class Sandboxes(McpExtension):
    """Hooks named as methods of the extension: bound to the instance that offers the tool."""

    def __init__(self, enabled: bool = True, members: tuple[str, ...] = ()) -> None:
        self.enabled = enabled
        self.members = members

    def manifest(self) -> PluginManifest:
        return PluginManifest(name="sandboxes", version="1.0.0")

    async def is_enabled(self) -> bool:
        return self.enabled

    def is_member(self, request: McpRequest, policy: Policy) -> bool:
        policy.hooks.append(("authorize", request.method))
        return request.identity is not None and request.identity.subject in self.members

    @tool(should_register=is_enabled, authorize=is_member)
    async def launch_sandbox(self, sandbox_name: str) -> dict:
        """Launch a sandbox."""
        return {"sandbox": sandbox_name}


async def test_tool_hooks_name_methods_of_the_extension_and_the_function_stays_callable() -> None:
    spec = Sandboxes(members=("ada",)).tools()[0]
    assert spec.should_register is not None
    assert spec.authorize is not None
    assert getattr(spec.authorize, "__self__", None) is not None
    assert await Sandboxes().launch_sandbox("x") == {"sandbox": "x"}  # no server involved

    policy = Policy()
    container = Container()
    container.instance(Policy, policy)
    catalog = Platform([Sandboxes(members=("ada",))]).compile(container)
    for mode in SDK_MODES:
        async with sdk_client(catalog, container, mode) as client:
            assert (await client.list_tools()).tools == []
            with pytest.raises(mcp.MCPError) as raised:
                await client.call_tool("launch_sandbox", {"sandbox_name": "a"})
            assert raised.value.code == AUTHORIZATION_ERROR
        with signed_in("ada"):
            async with sdk_client(catalog, container, mode) as client:
                assert [t.name for t in (await client.list_tools()).tools] == ["launch_sandbox"]
                result = await client.call_tool("launch_sandbox", {"sandbox_name": "a"})
                assert result.structured_content == {"sandbox": "a"}
        with signed_in("grace"):
            async with sdk_client(catalog, container, mode) as client:
                assert (await client.list_tools()).tools == []

    off = Platform([Sandboxes(enabled=False, members=("ada",))]).compile(container)
    with signed_in("ada"):
        for era in ERAS:
            client = McpTestClient(container, off, protocol=era)  # type: ignore[arg-type]
            hidden = await client.tool("launch_sandbox", {"sandbox_name": "a"})
            assert hidden.error == {
                "code": types.INVALID_PARAMS,
                "message": "Unknown tool: launch_sandbox",
            }


def _open_to_all() -> bool:
    return True


class OpenSandboxes(Sandboxes):
    """A subclass overriding a hook method: the override answers."""

    def is_member(self, request: McpRequest, policy: Policy) -> bool:
        return True

    @staticmethod
    def always() -> bool:
        return True

    @tool(authorize=always)
    def stop_sandbox(self, sandbox_name: str) -> str:
        return f"stopped {sandbox_name}"

    @tool(should_register=_open_to_all)
    def list_sandboxes(self) -> list[str]:
        return []


async def test_a_subclass_override_of_a_hook_method_answers_and_other_callables_stay() -> None:
    extension = OpenSandboxes()
    specs = {spec.name: spec for spec in extension.tools()}
    authorize = specs["launch_sandbox"].authorize
    assert getattr(authorize, "__func__", None) is OpenSandboxes.is_member
    assert specs["stop_sandbox"].authorize is OpenSandboxes.always
    assert specs["list_sandboxes"].should_register is _open_to_all

    policy = Policy()
    container = Container()
    container.instance(Policy, policy)
    client = McpTestClient(container, Platform([extension]).compile(container))
    listing = (await client.list_tools()).result
    assert listing is not None
    assert [t["name"] for t in listing["tools"]] == [
        "launch_sandbox",
        "stop_sandbox",
        "list_sandboxes",
    ]
    assert (await client.tool("launch_sandbox", {"sandbox_name": "b"})).error is None
    assert policy.hooks == []  # the base class's is_member never ran


# -- one scope per request ------------------------------------------------------------------


class Session:
    """A scoped service with a finalizer."""

    def __init__(self, log: list[str]) -> None:
        self.log = log


async def test_hooks_and_the_handler_share_the_calls_scope() -> None:
    log: list[str] = []
    seen: list[Session] = []

    def open_session() -> Iterator[Session]:
        log.append("open")
        yield Session(log)
        log.append("close")

    def should_register(session: Session) -> bool:
        seen.append(session)
        log.append("should_register")
        return True

    async def authorize(session: Session, request: McpRequest) -> bool:
        seen.append(session)
        log.append("authorize")
        return True

    def handler(session: Session) -> str:
        seen.append(session)
        log.append("handle")
        return "ok"

    container = Container()
    container.scoped(Session, open_session)
    spec = ToolSpec(
        name="scoped", handler=handler, should_register=should_register, authorize=authorize
    )
    catalog = Platform([Offers(spec)]).compile(container)
    for mode in SDK_MODES:
        log.clear()
        seen.clear()
        async with sdk_client(catalog, container, mode) as client:
            await client.list_tools()
            assert log == ["open", "should_register", "authorize", "close"]
            log.clear()
            await client.call_tool("scoped", {})
        assert log == ["open", "should_register", "authorize", "handle", "close"]
        assert seen[2] is seen[3] is seen[4]
        assert seen[0] is not seen[2]  # the listing had a scope of its own


# -- a replacement and the original's hooks -------------------------------------------------


class Replacing(McpExtension):
    def __init__(self, replacement: ToolSpec) -> None:
        self.replacement = replacement

    def tool_extensions(self) -> list[ToolExtension]:
        return [ToolExtension("launch_sandbox", replace=self.replacement)]


async def test_a_replacement_keeps_the_original_hooks_unless_it_sets_its_own() -> None:
    def launch_sandbox(sandbox_name: str) -> str:
        return f"replaced {sandbox_name}"

    container = Container()
    container.instance(Policy, Policy())
    original = Sandboxes(members=())

    keeps = Platform([original, Replacing(ToolSpec("launch_sandbox", launch_sandbox))])
    tool_ = keeps.compile(container).tools["launch_sandbox"]
    assert len(tool_.hooks.should_register) == 1
    assert len(tool_.hooks.authorize) == 1
    refused = await McpTestClient(container, keeps.compile(container)).tool(
        "launch_sandbox", {"sandbox_name": "a"}
    )
    assert refused.error is not None
    assert refused.error["code"] == AUTHORIZATION_ERROR

    own = ToolSpec("launch_sandbox", launch_sandbox, authorize=lambda: True)
    sets = Platform([original, Replacing(own)]).compile(container)
    served = await McpTestClient(container, sets).tool("launch_sandbox", {"sandbox_name": "a"})
    assert served.texts == ["replaced a"]
    assert len(sets.tools["launch_sandbox"].hooks.should_register) == 1  # still the original's


# -- compile-time problems ---------------------------------------------------------------------


class Repository:
    """Needs a DSN nobody bound."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn


def problems_of(*specs: ToolSpec) -> str:
    with pytest.raises(CompileError) as caught:
        Platform([Offers(*specs)]).compile(Container())
    return str(caught.value)


def test_hook_parameters_without_a_source_are_reported_with_their_path() -> None:
    def needs_an_argument(sandbox_name: str) -> bool:
        return True

    def needs_a_repository(repository: Repository) -> bool:
        return True

    def handler(sandbox_name: str, repository: Repository) -> str:
        return sandbox_name

    message = problems_of(
        ToolSpec(
            "launch",
            handler,
            should_register=needs_an_argument,
            authorize=needs_a_repository,
        ),
        ToolSpec("other", other, authorize=42),  # type: ignore[arg-type]
    )
    assert message.startswith("Cannot compile mcp-adapter: 4 problems")
    # the hook: hooks take no tool arguments, only injected values
    assert "parameter sandbox_name: str of " in message
    assert "should_register of tool 'launch' -> " in message
    assert "needs_an_argument(sandbox_name)" in message
    # the dependency path, from the tool and the hook to what is missing
    assert "authorize of tool 'launch' -> " in message
    assert "needs_a_repository(repository) -> Repository" in message
    # the handler's own problem is reported too
    assert "handler(repository)" in message
    assert "the authorize hook 42 of tool 'other' is not callable" in message


def test_a_hook_that_is_a_bad_signature_is_reported() -> None:
    def variadic(*flags: bool) -> bool:
        return True

    message = problems_of(ToolSpec("launch", other, should_register=variadic))
    assert "handlers cannot accept *args or **kwargs" in message
    assert "should_register of tool 'launch' -> " in message
