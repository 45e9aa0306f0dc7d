# Seed 000, "Where the description comes from": the method as written, inside an
# extension class (the seed shows the method alone); only the import lines changed.
# Kept as the seed prints it: no reformatting, no import sorting.
# fmt: off
from mcp_adapter import McpExtension, tool


class Notebook(McpExtension):
    @tool()
    async def read_cell(self, index: int) -> dict:
        """Read one cell of the notebook in use, with its outputs."""
