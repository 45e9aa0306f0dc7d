"""The platform: registration, entry-point discovery, extending tools by name, conflicts."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from mcp.types import ToolAnnotations

from container import Container
from mcp_adapter import (
    TOOLS,
    CompileError,
    McpExtension,
    McpResponse,
    Platform,
    PluginManifest,
    Server,
    Tool,
    ToolSpec,
    tool,
)
from mcp_adapter.compiled.catalog import UnknownToolsetError
from mcp_adapter.extensions import (
    ENTRY_POINT_GROUP,
    TOOL_EXTENSIONS,
    Call,
    ExtensionLoadError,
    Next,
    ToolExtension,
    tool_middleware,
)
from mcp_adapter.testing import McpTestClient
from tests.extensions.seed_examples.offering import Sandboxes
from tests.extensions.support import LEGACY, MODERN, host_call, host_tools

pytestmark = pytest.mark.anyio


class Extending(McpExtension):
    """An extension that contributes only ``ToolExtension``s, given at construction."""

    def __init__(self, name: str, *extensions: ToolExtension) -> None:
        self.name = name
        self.extensions = list(extensions)

    def manifest(self) -> PluginManifest:
        return PluginManifest(name=self.name, version="2.0.0")

    def tool_extensions(self) -> list[ToolExtension]:
        return self.extensions


def problems(platform: Platform, server: type[Server] | None = None) -> CompileError:
    with pytest.raises(CompileError) as caught:
        platform.compile(Container(), server)
    return caught.value


# -- registration and entry points ---------------------------------------------------------


def test_register_takes_instances_or_classes_once_each() -> None:
    platform = Platform()
    sandboxes = platform.register(Sandboxes)
    assert isinstance(sandboxes, Sandboxes)
    platform.register(sandboxes)
    assert platform.extensions == (sandboxes,)
    with pytest.raises(TypeError, match="is not an McpExtension"):
        platform.register(object())  # type: ignore[arg-type]


def test_an_unknown_contribution_point_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"unknown contribution point 'mcp\.tool'"):
        list(Platform([Sandboxes()]).get_contributions("mcp.tool"))


PLUGIN = '''
from mcp_adapter import McpExtension, PluginManifest, tool


class Notes(McpExtension):
    def manifest(self) -> PluginManifest:
        return PluginManifest(name="notes", version="0.3.0")

    @tool()
    def add_note(self, text: str) -> dict:
        """Add a note."""
        return {"saved": text}


class Clocks(McpExtension):
    @tool()
    def what_time(self) -> str:
        """Tell the time."""
        return "noon"


def make_clocks() -> Clocks:
    return Clocks()


NOT_AN_EXTENSION = 42
'''


def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry_points: str) -> None:
    """A distribution on ``sys.path``: its module and a dist-info with entry points."""
    (tmp_path / "demo_notes_plugin.py").write_text(PLUGIN)
    info = tmp_path / "demo_notes_plugin-0.3.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: demo-notes-plugin\nVersion: 0.3.0\n"
    )
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
    monkeypatch.syspath_prepend(str(tmp_path))


async def test_discover_registers_installed_extensions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(
        tmp_path,
        monkeypatch,
        f"""
        [{ENTRY_POINT_GROUP}]
        notes = demo_notes_plugin:Notes
        clocks = demo_notes_plugin:make_clocks
        """,
    )
    platform = Platform([Sandboxes()])
    found = platform.discover()
    assert [type(extension).__name__ for extension in found] == ["Clocks", "Notes"]
    assert platform.discover() == []  # already registered classes are not registered twice
    contributed = [(c.plugin.name, c.value.name) for c in platform.get_contributions(TOOLS)]
    assert contributed == [
        ("sandboxes", "launch_sandbox"),
        ("clocks", "what_time"),
        ("notes", "add_note"),
    ]
    catalog = platform.compile(Container())
    assert catalog.toolsets == {"sandboxes", "clocks", "notes"}
    result = await host_call(Container(), catalog, "add_note", {"text": "hi"}, MODERN)
    assert result["structuredContent"] == {"saved": "hi"}


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("demo_notes_plugin:Missing", "cannot load entry point 'broken'"),
        ("demo_notes_plugin:NOT_AN_EXTENSION", "yields 42, not an McpExtension"),
        ("no_such_module_anywhere:Thing", "No module named 'no_such_module_anywhere'"),
    ],
)
def test_an_entry_point_that_does_not_load_names_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, message: str
) -> None:
    install(tmp_path, monkeypatch, f"[demo.broken.extensions]\nbroken = {target}\n")
    with pytest.raises(ExtensionLoadError, match=message):
        Platform().discover("demo.broken.extensions")


# -- extending a tool by name ---------------------------------------------------------------


async def test_middleware_wraps_the_handler_first_registered_outermost() -> None:
    calls: list[str] = []

    def layer(label: str) -> Any:
        async def middleware(call: Call, call_next: Next) -> Any:
            calls.append(f"{label} before {dict(call.arguments)}")
            result = await call_next(
                call.with_arguments(variant=f"{call.arguments['variant']}+{label}")
            )
            calls.append(f"{label} after")
            return {**result, "wrapped_by": [*result.get("wrapped_by", []), label]}

        return middleware

    platform = Platform(
        [
            Sandboxes(),
            Extending("outer", ToolExtension("launch_sandbox", middleware=layer("outer"))),
            Extending("inner", ToolExtension("launch_sandbox", middleware=layer("inner"))),
        ]
    )
    catalog = platform.compile(Container())
    result = await host_call(Container(), catalog, "launch_sandbox", {"sandbox_name": "m"}, MODERN)
    assert result["structuredContent"] == {
        "sandbox": "m",
        "variant": "eval+outer+inner",
        "status": "running",
        "wrapped_by": ["inner", "outer"],
    }
    assert calls == [
        "outer before {'sandbox_name': 'm', 'variant': 'eval'}",
        "inner before {'sandbox_name': 'm', 'variant': 'eval+outer'}",
        "inner after",
        "outer after",
    ]


async def test_middleware_can_answer_without_calling_the_handler() -> None:
    async def closed(call: Call, call_next: Next) -> Any:
        return McpResponse.error(f"{call.name} is closed for maintenance")

    catalog = Platform(
        [Sandboxes(), Extending("gate", ToolExtension("launch_sandbox", middleware=closed))]
    ).compile(Container())
    result = await host_call(Container(), catalog, "launch_sandbox", {"sandbox_name": "x"}, LEGACY)
    assert result["isError"] is True
    assert result["content"] == [
        {"type": "text", "text": "launch_sandbox is closed for maintenance"}
    ]


async def test_middleware_sees_validated_arguments_and_failures_stay_safe() -> None:
    async def broken(call: Call, call_next: Next) -> Any:
        raise RuntimeError("middleware secret")

    catalog = Platform(
        [Sandboxes(), Extending("gate", ToolExtension("launch_sandbox", middleware=broken))]
    ).compile(Container())
    invalid = await host_call(Container(), catalog, "launch_sandbox", {"sandbox_name": 3}, MODERN)
    assert invalid["content"][0]["text"].startswith("Invalid tool arguments")
    failed = await host_call(Container(), catalog, "launch_sandbox", {"sandbox_name": "x"}, MODERN)
    assert failed["content"][0]["text"].startswith("Tool execution failed (incident ")
    assert "secret" not in str(failed)


class Clock:
    def now(self) -> str:
        return "noon"


async def test_middleware_around_a_sync_handler_with_injected_services() -> None:
    class Timed(McpExtension):
        @tool()
        def stamp(self, label: str, clock: Clock) -> str:
            return f"{label} at {clock.now()}"

    class Loud(McpExtension):
        @tool_middleware("stamp", title="Stamp (loud)")
        async def shout(self, call: Call, call_next: Next) -> Any:
            return str(await call_next(call)).upper()

    catalog = Platform([Timed(), Loud()]).compile(Container())
    assert catalog.tools["stamp"].modern.title == "Stamp (loud)"
    result = await host_call(Container(), catalog, "stamp", {"label": "x"}, MODERN)
    assert result["structuredContent"] == "X AT NOON"


async def test_amendments_change_what_clients_read() -> None:
    platform = Platform(
        [
            Sandboxes(),
            Extending(
                "docs",
                ToolExtension(
                    "launch_sandbox",
                    description="Launch an isolated sandbox.",
                    meta={"policy": "session"},
                ),
            ),
            Extending(
                "hints",
                ToolExtension(
                    "launch_sandbox",
                    title="Sandbox",
                    annotations=ToolAnnotations(idempotent_hint=False, open_world_hint=False),
                    meta={"scope": "sandboxes:write"},
                ),
            ),
        ]
    )
    catalog = platform.compile(Container())
    [entry] = await host_tools(Container(), catalog, MODERN)
    assert entry["description"] == "Launch an isolated sandbox."
    assert entry["title"] == "Sandbox"
    assert entry["annotations"] == {"idempotentHint": False, "openWorldHint": False}
    assert entry["_meta"] == {"policy": "session", "scope": "sandboxes:write"}
    assert catalog.tools["launch_sandbox"].toolset == "sandboxes"


async def test_a_replacement_swaps_the_tool_and_keeps_its_toolset() -> None:
    async def launch_sandbox(sandbox_name: str, region: str = "eu") -> dict:
        """Launch a sandbox in a region."""
        return {"sandbox": sandbox_name, "region": region}

    async def tag(call: Call, call_next: Next) -> Any:
        return {**(await call_next(call)), "tagged": True}

    replacement = ToolSpec(name="launch_sandbox", handler=launch_sandbox)
    catalog = Platform(
        [
            Sandboxes(),
            Extending("regions", ToolExtension("launch_sandbox", replace=replacement)),
            Extending("tags", ToolExtension("launch_sandbox", middleware=tag)),
        ]
    ).compile(Container())
    tool_ = catalog.tools["launch_sandbox"]
    assert tool_.toolset == "sandboxes"
    assert set(tool_.modern.input_schema["properties"]) == {"sandbox_name", "region"}
    assert tool_.modern.description == "Launch a sandbox in a region."
    result = await host_call(Container(), catalog, "launch_sandbox", {"sandbox_name": "r"}, MODERN)
    assert result["structuredContent"] == {"sandbox": "r", "region": "eu", "tagged": True}


def test_tool_extensions_are_contributions_too() -> None:
    extension = ToolExtension("launch_sandbox", description="d")
    [contribution] = Platform([Sandboxes(), Extending("e", extension)]).get_contributions(
        TOOL_EXTENSIONS
    )
    assert contribution.plugin == PluginManifest(name="e", version="2.0.0")
    assert contribution.value is extension


# -- what is reported when the server is built ----------------------------------------------


def test_extending_a_name_nobody_contributed_is_reported() -> None:
    error = problems(Platform([Sandboxes(), Extending("x", ToolExtension("launch", title="t"))]))
    assert "x extends tool 'launch', which no extension contributed" in str(error)
    assert "contributed tools: launch_sandbox" in str(error)


def test_conflicting_replacements_are_reported() -> None:
    async def one(sandbox_name: str) -> dict:
        return {}

    async def two(sandbox_name: str) -> dict:
        return {}

    error = problems(
        Platform(
            [
                Sandboxes(),
                Extending(
                    "a", ToolExtension("launch_sandbox", replace=ToolSpec("launch_sandbox", one))
                ),
                Extending(
                    "b", ToolExtension("launch_sandbox", replace=ToolSpec("launch_sandbox", two))
                ),
            ]
        )
    )
    assert "conflicting replacements of tool 'launch_sandbox' from a, b" in str(error)


def test_conflicting_amendments_are_reported_and_equal_ones_are_not() -> None:
    error = problems(
        Platform(
            [
                Sandboxes(),
                Extending("a", ToolExtension("launch_sandbox", description="A", meta={"k": 1})),
                Extending("b", ToolExtension("launch_sandbox", description="B", meta={"k": 2})),
                Extending("c", ToolExtension("launch_sandbox", title="Same", meta={"k": 1})),
                Extending("d", ToolExtension("launch_sandbox", title="Same")),
            ]
        )
    )
    text = str(error)
    assert "conflicting descriptions of tool 'launch_sandbox' from a, b" in text
    assert "conflicting meta 'k' of tool 'launch_sandbox' from a, b" in text
    assert "titles" not in text
    assert len(error.problems) == 2


def test_everything_wrong_is_reported_at_once() -> None:
    def sync_middleware(call: Call, call_next: Next) -> Any:
        return None

    class Twice(McpExtension):
        @tool(toolset="bad toolset")
        def launch_sandbox(self) -> str:
            return ""

    error = problems(
        Platform(
            [
                Sandboxes(),
                Twice(),
                Extending("late", ToolExtension("launch_sandbox", middleware=sync_middleware)),
                Extending("typo", ToolExtension("lunch_sandbox", title="x")),
                Extending(
                    "misnamed",
                    ToolExtension(
                        "launch_sandbox", replace=ToolSpec("other", Sandboxes().launch_sandbox)
                    ),
                ),
            ]
        )
    )
    text = str(error)
    assert "tool 'launch_sandbox' is contributed by both sandboxes and twice" in text
    assert "which no extension contributed" in text
    assert "is not a ToolSpec named 'launch_sandbox'" in text
    assert "is not async" in text
    assert len(error.problems) == 4


# -- served with a class-based Server, and by toolset ----------------------------------------


class PingTool(Tool):
    name = "ping"

    async def handle(self) -> McpResponse:
        return McpResponse.text("pong")


class Demo(Server):
    name = "Demo"
    version = "2.0.0"
    tools = (PingTool,)


async def test_class_based_servers_and_extensions_are_served_together() -> None:
    catalog = Platform([Sandboxes()]).compile(Container(), Demo)
    assert catalog.name == "Demo"
    assert list(catalog.tools) == ["ping", "launch_sandbox"]
    names = [entry["name"] for entry in await host_tools(Container(), catalog, LEGACY)]
    assert names == ["ping", "launch_sandbox"]
    ping = await host_call(Container(), catalog, "ping", {}, LEGACY)
    assert ping["content"] == [{"type": "text", "text": "pong"}]


def test_a_class_tool_and_an_extension_tool_with_one_name_are_reported() -> None:
    class Ping(McpExtension):
        @tool()
        def ping(self) -> str:
            return "pong"

    text = str(problems(Platform([Ping()]), Demo))
    assert "duplicate tool name 'ping'" in text


def test_a_class_tool_is_extended_by_name_and_cannot_be_replaced() -> None:
    catalog = Platform([Extending("x", ToolExtension("ping", title="P"))]).compile(
        Container(), Demo
    )
    assert catalog.tools["ping"].modern.title == "P"  # more in test_class_tools.py
    swap = ToolExtension("ping", replace=ToolSpec(name="ping", handler=lambda: "pong"))
    error = problems(Platform([Extending("x", swap)]), Demo)
    assert "a class tool of the Server declaration" in str(error)


async def test_toolsets_select_what_a_client_gets() -> None:
    class Admin(McpExtension):
        @tool(toolset="sandbox-admin")
        def stop_sandbox(self, sandbox_name: str) -> str:
            return sandbox_name

    catalog = Platform([Sandboxes(), Admin()]).compile(Container())
    assert catalog.toolsets == {"sandboxes", "sandbox-admin"}
    only = catalog.select(["sandbox-admin"])
    assert list(only.tools) == ["stop_sandbox"]
    assert [entry["name"] for entry in await host_tools(Container(), only, MODERN)] == [
        "stop_sandbox"
    ]
    unknown = await host_call(Container(), only, "launch_sandbox", {"sandbox_name": "x"}, MODERN)
    assert "error" in unknown
    with pytest.raises(UnknownToolsetError, match="unknown toolset"):
        catalog.select(["nope"])


async def test_a_platform_is_servable_as_is_with_its_server_declaration() -> None:
    from mcp_adapter.serving import catalog_of

    platform = Platform([Sandboxes()], server=Demo)
    catalog = catalog_of(platform, Container())
    assert catalog.name == "Demo"
    assert list(catalog.tools) == ["ping", "launch_sandbox"]
    named = Platform([Sandboxes()], name="sandbox-host", version="3.1.0").compile(Container())
    assert (named.name, named.version) == ("sandbox-host", "3.1.0")


# -- @tool_middleware does not depend on an override of tool_extensions() ---------------------


class Guarded(McpExtension):
    """A tool and a guard around it, both by decorator."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    @tool
    def launch(self, target: str) -> str:
        return f"launched {target}"

    @tool_middleware("launch", meta={"guarded": True})
    async def guard(self, call: Call, call_next: Next) -> Any:
        self.seen.append(str(call.arguments["target"]))
        if call.arguments["target"] == "prod":
            return McpResponse.error("prod is refused")
        return await call_next(call)


class ForgetsSuper(Guarded):
    """Overrides ``tool_extensions()`` for one more extension, without ``*super()``."""

    def tool_extensions(self) -> list[ToolExtension]:
        return [ToolExtension("launch", title="Launch")]


class KeepsSuper(Guarded):
    def tool_extensions(self) -> list[ToolExtension]:
        return [*super().tool_extensions(), ToolExtension("launch", title="Launch")]


class ReturnsNothing(Guarded):
    def tool_extensions(self) -> list[ToolExtension]:
        return []


@pytest.mark.parametrize("era", [MODERN, LEGACY])
@pytest.mark.parametrize("extension", [ForgetsSuper, KeepsSuper, ReturnsNothing])
async def test_decorated_middleware_runs_whatever_tool_extensions_returns(
    extension: type[Guarded], era: str
) -> None:
    guarded = extension()
    catalog = Platform([guarded]).compile(Container())
    entry = catalog.tools["launch"].modern
    assert entry.meta == {"guarded": True}
    if extension is not ReturnsNothing:
        assert entry.title == "Launch"
    client = McpTestClient(Container(), catalog, protocol=era)  # type: ignore[arg-type]
    refused = await client.tool("launch", {"target": "prod"})
    refused.assertError("prod is refused")
    (await client.tool("launch", {"target": "dev"})).assertOk()
    assert guarded.seen == ["prod", "dev"]  # once per call: not contributed twice


def test_the_decorated_extensions_come_first_and_once() -> None:
    platform = Platform([KeepsSuper()])
    values = [c.value for c in platform.get_contributions(TOOL_EXTENSIONS)]
    assert [(v.name, v.title, v.middleware is not None) for v in values] == [
        ("launch", None, True),
        ("launch", "Launch", False),
    ]
