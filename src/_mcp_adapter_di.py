"""What the ``mcp-adapter-di`` distribution knows of itself with the standard library alone:
its name, its version and the version line, and the ``mcp-adapter`` command's entry.

Importing anything under ``mcp_adapter`` runs the package's ``__init__.py``, which
imports the whole package and the ``mcp`` SDK (more than a second). ``mcp-adapter
--version`` asks for none of it: the entry answers it from the installed
distributions' metadata and hands every other command line to
:func:`mcp_adapter.cli.main`. Private (the leading underscore): import these names
from ``mcp_adapter.distribution`` and ``mcp_adapter.cli``.
"""

from __future__ import annotations

import importlib.metadata
import platform
import sys

DISTRIBUTION = "mcp-adapter-di"
"""The name to install: ``pip install mcp-adapter-di`` (``mcp-adapter`` on the index is
another project)."""
SDK = "mcp"
"""The distribution of the official MCP SDK the adapter serves through."""


def version(distribution: str = DISTRIBUTION) -> str:
    """An installed distribution's version (``0+unknown`` when it is not installed, as in a
    source tree never installed)."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


def version_line() -> str:
    """``mcp-adapter-di 0.1.0 (mcp 2.3.0, Python 3.11.7)``: what a bug report needs."""
    return f"{DISTRIBUTION} {version()} ({SDK} {version(SDK)}, Python {platform.python_version()})"


def main() -> int:
    """The ``mcp-adapter`` command: ``--version`` alone is answered here; anything else
    runs :func:`mcp_adapter.cli.main` (which also takes ``--version`` among other options)."""
    if sys.argv[1:] == ["--version"]:
        print(version_line())
        return 0
    from mcp_adapter.cli import main as run

    return run()
