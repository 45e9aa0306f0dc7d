# Seed 000, tools built at run time, as written; only the import lines changed, plus the
# imports of the names the seed leaves undefined (``McpExtension`` comes from the
# previous example, ``launch_sandbox`` and ``LAUNCH_SANDBOX_ANNOTATIONS`` from elsewhere).
# Kept as the seed prints it: no reformatting, no import sorting.
# fmt: off
# ruff: noqa: I001
from mcp_adapter import ToolSpec
from mcp_adapter import McpExtension
from tests.extensions.seed_examples.sandbox_runtime import (
    LAUNCH_SANDBOX_ANNOTATIONS,
    launch_sandbox,
)


class Sandboxes(McpExtension):
    def tools(self) -> list[ToolSpec]:
        return [
            ToolSpec(
                name="launch_sandbox",
                handler=launch_sandbox,
                annotations=LAUNCH_SANDBOX_ANNOTATIONS,
            ),
        ]
