# Seed 000, "Offering one", as written; only the import lines changed
# (``reactor`` / ``reactor_mcp_server`` -> ``mcp_adapter``), plus the import of the
# ``launch`` helper the seed leaves undefined.
# Kept as the seed prints it: no reformatting, no import sorting.
# fmt: off
# ruff: noqa: I001
from mcp_adapter import PluginManifest
from mcp_adapter import McpExtension, tool
from tests.extensions.seed_examples.sandbox_runtime import launch


class Sandboxes(McpExtension):
    def manifest(self) -> PluginManifest:
        return PluginManifest(name="sandboxes", version="1.0.0")

    @tool(title="Launch Sandbox")
    async def launch_sandbox(self, sandbox_name: str, variant: str = "eval") -> dict:
        """Launch a sandbox for this session to run code in."""
        return await launch(sandbox_name, variant)
