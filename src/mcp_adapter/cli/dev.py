"""``mcp-adapter dev TARGET``: ``serve --http --reload``, and how to open the MCP Inspector
on it."""

from __future__ import annotations

import argparse

from mcp_adapter.cli import serve
from mcp_adapter.cli.options import ServeOptions
from mcp_adapter.cli.parsing import Command
from mcp_adapter.cli.settings import add_serve_arguments

INSPECTOR = "npx @modelcontextprotocol/inspector"
FIXED = frozenset({"http", "reload", "identity"})
"""The ``serve`` settings ``dev`` has no flag for: it sets ``http`` and ``reload`` itself,
and ``identity`` names the caller over stdio only."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``dev``."""
    parser.add_argument("target", metavar="MODULE:ATTR", help="the server to serve")
    add_serve_arguments(parser, fixed=FIXED)


def inspector_command(options: ServeOptions) -> str:
    """The command that opens the MCP Inspector's web UI connected to the server.

    >>> inspector_command(ServeOptions("app:App", http=True, port=8000))
    'npx @modelcontextprotocol/inspector --transport http --server-url http://127.0.0.1:8000/mcp'
    """
    command = f"{INSPECTOR} --transport http --server-url {options.url}"
    if options.auth is not None:
        command += ' --header "Authorization: Bearer $TOKEN"'
    return command


def run(args: argparse.Namespace) -> int:
    return serve.run(
        args, banner=lambda options: [f"  MCP Inspector: {inspector_command(options)}"]
    )


COMMAND = Command(
    "dev",
    help="serve over HTTP, restarting on code changes, and say how to open the MCP Inspector",
    description="Serve MODULE:ATTR (or path/to/app.py:ATTR) as `serve --http --reload` "
    "does: every serve flag but --http, --reload and --identity (stdio only) applies. The "
    "banner adds the command "
    f"that opens the MCP Inspector on the server ({INSPECTOR}; Node.js needed).",
    arguments=add_arguments,
    run=run,
    defaults={"http": True, "reload": True, "identity": None},
)
