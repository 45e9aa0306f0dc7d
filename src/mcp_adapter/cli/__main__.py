"""``python -m mcp_adapter.cli`` is the ``mcp-adapter`` command."""

import sys

from mcp_adapter.cli import main

sys.exit(main())
