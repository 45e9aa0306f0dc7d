"""Contribution points and what the platform yields for them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Generic, Literal, TypeVar

from mcp_adapter.extensions.manifest import PluginManifest

if TYPE_CHECKING:
    from mcp_adapter.extensions.extension import McpExtension

T = TypeVar("T")

TOOLS: Final[Literal["mcp.tools"]] = "mcp.tools"
"""Tools (``ToolSpec``), each contributed under its own name."""

TOOL_EXTENSIONS: Final[Literal["mcp.tools.extensions"]] = "mcp.tools.extensions"
"""Extensions of tools by name (``ToolExtension``): middleware, amendments, replacements."""

POINTS: Final = (TOOLS, TOOL_EXTENSIONS)


@dataclass(frozen=True, slots=True)
class Contribution(Generic[T]):
    """One value an extension contributed at a point: ``plugin`` says who."""

    plugin: PluginManifest
    value: T
    point: str
    extension: McpExtension = field(repr=False, compare=False)
