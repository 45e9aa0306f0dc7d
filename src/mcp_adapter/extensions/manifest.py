"""``PluginManifest``: who contributed something, by name and version."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PluginManifest:
    """The identity of an extension.

    ``name`` is also the extension's own toolset: a tool whose ``ToolSpec.toolset``
    is empty belongs to it.

    >>> manifest = PluginManifest(name="sandboxes", version="1.0.0")
    >>> print(manifest)
    sandboxes 1.0.0
    """

    name: str
    version: str = "0.0.0"

    def __str__(self) -> str:
        return f"{self.name} {self.version}"
