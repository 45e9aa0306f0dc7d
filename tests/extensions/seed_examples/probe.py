# Seed 000, "Putting them on a server by hand", as written; only the import lines
# changed, plus the import of the ``Sandboxes`` extension from the first example.
# Kept as the seed prints it: no reformatting, no import sorting.
# fmt: off
# ruff: noqa: I001
from mcp.server.mcpserver import MCPServer
from mcp_adapter import put_on_server
from tests.extensions.seed_examples.offering import Sandboxes

server = MCPServer("probe")
put_on_server(server, Sandboxes().tools())
