"""Testing helpers: a client over real JSON-RPC serialization, result assertions,
hypothesis strategies and the schema-separation check.

``payloads``, ``from_json_schema``, ``assert_schema_separation`` and their
companions need ``hypothesis`` (``pip install 'mcp-adapter-di[testing]'``); they
are imported on first use, so ``McpTestClient`` works without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_adapter.lazy_exports import on_first_use
from mcp_adapter.testing.client import McpTestClient
from mcp_adapter.testing.result import McpResult, texts_of
from mcp_adapter.testing.tasks import TaskClient

if TYPE_CHECKING:
    from mcp_adapter.testing.plugin import McpOverride
    from mcp_adapter.testing.separation import (
        SchemaSeparationError,
        SeparationReport,
        assert_schema_separation,
        injected_parameters,
        schema_problems,
    )
    from mcp_adapter.testing.strategies import from_json_schema, payloads

_ON_FIRST_USE = {
    "mcp_adapter.testing.plugin": ("McpOverride",),
    "mcp_adapter.testing.strategies": ("payloads", "from_json_schema"),
    "mcp_adapter.testing.separation": (
        "assert_schema_separation",
        "SchemaSeparationError",
        "SeparationReport",
        "injected_parameters",
        "schema_problems",
    ),
}

__getattr__ = on_first_use(globals(), _ON_FIRST_USE)


__all__ = [
    "McpOverride",
    "McpResult",
    "McpTestClient",
    "SchemaSeparationError",
    "SeparationReport",
    "TaskClient",
    "assert_schema_separation",
    "from_json_schema",
    "injected_parameters",
    "payloads",
    "schema_problems",
    "texts_of",
]
