"""``mcp-adapter list``: the catalog as a table, or the exact ``tools/list`` result."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

import anyio
from mcp import types

from mcp_adapter.cli.errors import CliError
from mcp_adapter.cli.loading import load_container, load_servable
from mcp_adapter.cli.parsing import Command
from mcp_adapter.cli.serve import compile_catalog, select
from mcp_adapter.cli.settings import add_container_option, parse_toolsets
from mcp_adapter.compiled.catalog import Catalog, CompiledResource
from mcp_adapter.testing.client import LEGACY, MODERN, McpTestClient


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``list``."""
    parser.add_argument("target", metavar="MODULE:ATTR", help="the server")
    add_container_option(parser)
    parser.add_argument("--json", action="store_true", help="print the tools/list result")
    parser.add_argument(
        "--protocol",
        choices=(MODERN, LEGACY),
        default=MODERN,
        help=f"protocol era of the --json result (default {MODERN})",
    )
    parser.add_argument("--toolsets", metavar="A,B", help="only these toolsets")


def describe_annotations(annotations: types.ToolAnnotations | None) -> str:
    """A short reading of a tool's hints; ``unset`` when it declares none.

    >>> describe_annotations(types.ToolAnnotations(read_only_hint=True, open_world_hint=False))
    'read-only, closed-world'
    """
    if annotations is None:
        return "unset"
    words = []
    if annotations.read_only_hint is not None:
        words.append("read-only" if annotations.read_only_hint else "writes")
    if annotations.destructive_hint is not None:
        words.append("destructive" if annotations.destructive_hint else "non-destructive")
    if annotations.idempotent_hint is not None:
        words.append("idempotent" if annotations.idempotent_hint else "not idempotent")
    if annotations.open_world_hint is not None:
        words.append("open-world" if annotations.open_world_hint else "closed-world")
    return ", ".join(words) or "unset"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [
        max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=False)
    ]
    lines = []
    for row in (headers, *rows):
        lines.append(
            "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True))
        )
    return [line.rstrip() for line in lines]


def render_catalog(catalog: Catalog) -> list[str]:
    lines = [f"{catalog.name} {catalog.version}".rstrip()]
    headers = ["TOOL", "TOOLSET", "TITLE", "ANNOTATIONS"]
    rows = []
    for tool in catalog.tools.values():
        entry = tool.modern
        title = entry.title or (entry.annotations.title if entry.annotations else None) or "-"
        # the catalog's word: class tools of a Server have no toolset (yet): "-"
        rows.append(
            [tool.name, tool.toolset or "-", title, describe_annotations(entry.annotations)]
        )
    lines += ["", *(table(headers, rows) if rows else ["(no tools)"])]
    resources = [[r.name, r.uri or r.uri_template_text] for r in _resources(catalog)]
    if resources:
        lines += ["", *table(["RESOURCE", "URI"], resources)]
    prompts = [[p.name, p.entry.title or "-"] for p in catalog.prompts.values()]
    if prompts:
        lines += ["", *table(["PROMPT", "TITLE"], prompts)]
    return lines


def _resources(catalog: Catalog) -> list[CompiledResource]:
    return [*catalog.resources.values(), *catalog.templates]


async def tools_list(catalog: Catalog, client: McpTestClient) -> Any:
    pages = []
    cursor = None
    while True:
        result = await client.list_tools(cursor)
        if "error" in result.message:
            raise CliError(f"tools/list failed: {result.message['error'].get('message')}")
        pages.append(result.message["result"])
        cursor = pages[-1].get("nextCursor")
        if not cursor:
            break
    return pages[0] if len(pages) == 1 else pages


def run(args: argparse.Namespace) -> int:
    container = load_container(args.container)
    catalog = select(
        compile_catalog(load_servable(args.target), container, args.target),
        parse_toolsets(args.toolsets),
    )
    if args.json:
        client = McpTestClient(container, catalog, protocol=args.protocol)
        result = anyio.run(tools_list, catalog, client)
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return 0
    print("\n".join(render_catalog(catalog)))
    return 0


COMMAND = Command(
    "list",
    help="show a server's tools, resources and prompts",
    description="Compile MODULE:ATTR and show its catalog as a table, or with --json "
    "print the exact tools/list result an anonymous client receives.",
    arguments=add_arguments,
    run=run,
)
