"""Seed 000's ``Sandboxes`` examples, run with only their import lines changed."""

from __future__ import annotations

import importlib
import inspect
import json
import sys

import pytest
from mcp.server import Server as LowLevelServer
from mcp.server.mcpserver import MCPServer

from container import Container
from mcp_adapter import (
    TOOLS,
    McpExtension,
    Platform,
    PluginManifest,
    ToolAnnotations,
    ToolSpec,
    put_on_server,
    tool,
)
from tests.extensions.seed_examples import offering, runtime_specs, sandbox_runtime
from tests.extensions.seed_examples.notebook import Notebook
from tests.extensions.support import (
    ERAS,
    LEGACY,
    MODERN,
    host_call,
    host_tools,
    sdk_call,
    sdk_tools,
)

pytestmark = pytest.mark.anyio

LAUNCH_SCHEMA = {
    "additionalProperties": False,
    "properties": {
        "sandbox_name": {"title": "Sandbox Name", "type": "string"},
        "variant": {"default": "eval", "title": "Variant", "type": "string"},
    },
    "required": ["sandbox_name"],
    "title": "launch_sandboxArguments",
    "type": "object",
}
DICT_OUTPUT = {"additionalProperties": True, "type": "object"}


# -- offering one -------------------------------------------------------------------------


def test_the_decorator_returns_the_function_unchanged() -> None:
    async def launch_sandbox(sandbox_name: str) -> dict:
        return {}

    assert tool(title="Launch Sandbox")(launch_sandbox) is launch_sandbox
    assert tool(launch_sandbox) is launch_sandbox
    method = offering.Sandboxes.__dict__["launch_sandbox"]
    assert inspect.iscoroutinefunction(method)
    assert method.__name__ == "launch_sandbox"
    assert method.__doc__ == "Launch a sandbox for this session to run code in."


async def test_a_decorated_method_is_callable_without_a_server() -> None:
    assert await offering.Sandboxes().launch_sandbox("x") == {
        "sandbox": "x",
        "variant": "eval",
        "status": "running",
    }
    assert ("x", "eval") in sandbox_runtime.LAUNCHED


def test_the_base_class_collects_marked_methods_bound_to_the_instance() -> None:
    sandboxes = offering.Sandboxes()
    [spec] = sandboxes.tools()
    assert spec.name == "launch_sandbox"
    assert spec.title == "Launch Sandbox"
    assert spec.description == ""  # empty: the docstring is used when the tool is built
    assert spec.toolset == ""
    assert spec.handler == sandboxes.launch_sandbox
    assert spec.handler.__self__ is sandboxes  # type: ignore[attr-defined]


async def test_the_host_lists_it_with_its_docstring_title_and_argument_schema() -> None:
    catalog = Platform([offering.Sandboxes()]).compile(Container())
    assert catalog.tools["launch_sandbox"].toolset == "sandboxes"
    for era in ERAS:
        [entry] = await host_tools(Container(), catalog, era)
        assert entry["name"] == "launch_sandbox"
        assert entry["title"] == "Launch Sandbox"
        assert entry["description"] == "Launch a sandbox for this session to run code in."
        assert entry["inputSchema"] == LAUNCH_SCHEMA
        assert entry["outputSchema"] == DICT_OUTPUT


async def test_the_host_calls_it_and_returns_the_dict_as_structured_content() -> None:
    catalog = Platform([offering.Sandboxes()]).compile(Container())
    for era in ERAS:
        result = await host_call(Container(), catalog, "launch_sandbox", {"sandbox_name": "a"}, era)
        expected = {"sandbox": "a", "variant": "eval", "status": "running"}
        assert result["structuredContent"] == expected
        assert result["isError"] is False
        [block] = result["content"]
        assert block["type"] == "text"
        assert json.loads(block["text"]) == expected  # the structured content, serialized


# -- tools built at run time --------------------------------------------------------------


async def test_overriding_tools_returns_specs_built_at_run_time() -> None:
    sandboxes = runtime_specs.Sandboxes()
    [spec] = sandboxes.tools()
    assert spec.handler is sandbox_runtime.launch_sandbox
    catalog = Platform([sandboxes]).compile(Container())
    [entry] = await host_tools(Container(), catalog, MODERN)
    assert entry["description"] == "Launch a sandbox for this session to run code in."
    assert entry["annotations"] == {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": False,
        "openWorldHint": True,
    }
    assert entry["inputSchema"]["properties"] == LAUNCH_SCHEMA["properties"]
    # no manifest(): the default names the extension after its class
    assert sandboxes.manifest() == PluginManifest(name="sandboxes", version="0.0.0")
    assert catalog.tools["launch_sandbox"].toolset == "sandboxes"


class MoreSandboxes(offering.Sandboxes):
    """Both styles: the decorator collection plus a spec built at run time."""

    def tools(self) -> list[ToolSpec]:
        more = ToolSpec(
            name="stop_sandbox",
            handler=self.stop,
            description="Stop a sandbox.",
            annotations=ToolAnnotations(idempotent=True, open_world=False),
            toolset="sandbox-admin",
        )
        return [*super().tools(), more]

    def stop(self, sandbox_name: str) -> str:
        """Not what a model reads: the spec's description overrides it."""
        return f"stopped {sandbox_name}"

    @tool(description="Restart a sandbox (the description a model needs).")
    async def restart(self, sandbox_name: str) -> str:
        """Restarts; the reader of the code reads this."""
        return f"restarted {sandbox_name}"


async def test_the_two_styles_mix_through_super() -> None:
    extension = MoreSandboxes()
    names = [spec.name for spec in extension.tools()]
    assert names == ["launch_sandbox", "restart", "stop_sandbox"]
    catalog = Platform([extension]).compile(Container())
    entries = {entry["name"]: entry for entry in await host_tools(Container(), catalog, MODERN)}
    assert entries["restart"]["description"] == "Restart a sandbox (the description a model needs)."
    assert entries["stop_sandbox"]["description"] == "Stop a sandbox."
    assert entries["stop_sandbox"]["annotations"] == {
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert catalog.tools["stop_sandbox"].toolset == "sandbox-admin"
    assert catalog.tools["restart"].toolset == "sandboxes"
    result = await host_call(Container(), catalog, "stop_sandbox", {"sandbox_name": "b"}, MODERN)
    assert result["content"] == [{"type": "text", "text": "stopped b"}]


# -- where the description comes from -----------------------------------------------------


async def test_the_docstring_is_the_description_a_model_sees() -> None:
    catalog = Platform([Notebook()]).compile(Container())
    [entry] = await host_tools(Container(), catalog, MODERN)
    assert entry["description"] == "Read one cell of the notebook in use, with its outputs."
    assert entry["inputSchema"]["properties"] == {"index": {"title": "Index", "type": "integer"}}


def test_description_overrides_the_docstring_on_the_decorator_and_the_spec() -> None:
    class Cells(McpExtension):
        @tool(description="Read cell `index` (0-based).")
        async def read_cell(self, index: int) -> dict:
            """Read one cell of the notebook in use, with its outputs."""
            return {}

    catalog = Platform([Cells()]).compile(Container())
    assert catalog.tools["read_cell"].modern.description == "Read cell `index` (0-based)."
    spec = ToolSpec(name="read", handler=Cells().read_cell, description="Overridden.")
    assert put_on_server(MCPServer("x"), [spec]).tools["read"].modern.description == "Overridden."


# -- putting them on a server by hand -----------------------------------------------------


async def test_put_on_server_on_mcpserver_probe_as_in_the_seed() -> None:
    sys.modules.pop("tests.extensions.seed_examples.probe", None)
    probe = importlib.import_module("tests.extensions.seed_examples.probe")
    server = probe.server
    assert isinstance(server, MCPServer)
    catalog = Platform([offering.Sandboxes()]).compile(Container())
    for era in ERAS:
        [entry] = await sdk_tools(server, era)
        [hosted] = await host_tools(Container(), catalog, era)
        assert entry == hosted
        result = await sdk_call(server, "launch_sandbox", {"sandbox_name": "p"}, era)
        assert result["structuredContent"] == {
            "sandbox": "p",
            "variant": "eval",
            "status": "running",
        }
    listed = await server.list_tools()  # MCPServer's own API sees the tool too
    assert [entry.name for entry in listed] == ["launch_sandbox"]


async def test_put_on_server_on_the_low_level_server() -> None:
    server: LowLevelServer = LowLevelServer("probe")
    put_on_server(server, offering.Sandboxes().tools())
    catalog = Platform([offering.Sandboxes()]).compile(Container())
    for era in (MODERN, LEGACY):
        assert await sdk_tools(server, era) == await host_tools(Container(), catalog, era)
        result = await sdk_call(
            server, "launch_sandbox", {"sandbox_name": "q", "variant": "gpu"}, era
        )
        assert result["structuredContent"] == {
            "sandbox": "q",
            "variant": "gpu",
            "status": "running",
        }


# -- the contribution point ---------------------------------------------------------------


def test_the_contributions_loop_prints_plugin_and_tool_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    sys.modules.pop("tests.extensions.seed_examples.contributions", None)
    importlib.import_module("tests.extensions.seed_examples.contributions")
    assert capsys.readouterr().out.splitlines() == [
        "sandboxes 1.0.0 launch_sandbox",
        "notebook 0.0.0 read_cell",
    ]


def test_contributions_carry_the_manifest_and_the_spec() -> None:
    sandboxes = offering.Sandboxes()
    [contribution] = list(Platform([sandboxes]).get_contributions(TOOLS))
    assert TOOLS == "mcp.tools"
    assert contribution.plugin == PluginManifest(name="sandboxes", version="1.0.0")
    assert isinstance(contribution.value, ToolSpec)
    assert contribution.value.name == "launch_sandbox"
    assert contribution.extension is sandboxes


def test_collection_follows_definition_order_and_overrides() -> None:
    class Base(McpExtension):
        @tool
        def first(self) -> str:
            return "1"

        @tool(name="second-tool")
        def second(self) -> str:
            return "2"

    class Child(Base):
        def first(self) -> str:  # overridden without @tool: no longer a tool
            return "one"

        @tool()
        def third(self) -> str:
            return "3"

    assert [spec.name for spec in Base().tools()] == ["first", "second-tool"]
    assert [spec.name for spec in Child().tools()] == ["second-tool", "third"]
    assert Child().manifest() == PluginManifest(name="child", version="0.0.0")
