"""``mcp-adapter inspect URL_OR_TARGET``: what a server offers, as a client sees it."""

from __future__ import annotations

import argparse
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
from mcp import Client, MCPError, types

from mcp_adapter.cli.connecting import Reach, add_reach_arguments, connected, plain, reach_of
from mcp_adapter.cli.errors import CliError
from mcp_adapter.cli.listing import describe_annotations, table
from mcp_adapter.cli.parsing import Command

MAX_PAGES = 1000
"""Pages of one listing read at most: a server whose cursors never end cannot hang it."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``inspect``."""
    add_reach_arguments(parser)
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the server's identity and every listed object as JSON",
    )


@dataclass(frozen=True, slots=True)
class Offer:
    """What one server listed to this client."""

    server: types.Implementation | None
    protocol_version: str
    tools: list[types.Tool]
    resources: list[types.Resource]
    templates: list[types.ResourceTemplate]
    prompts: list[types.Prompt]

    def to_json(self) -> dict[str, Any]:
        return {
            "server": None if self.server is None else plain(self.server),
            "protocolVersion": self.protocol_version,
            "tools": [plain(tool) for tool in self.tools],
            "resources": [plain(resource) for resource in self.resources],
            "resourceTemplates": [plain(template) for template in self.templates],
            "prompts": [plain(prompt) for prompt in self.prompts],
        }


async def _pages(
    method: str, fetch: Callable[[str | None], Awaitable[Any]], field: str
) -> list[Any]:
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await fetch(cursor)
        items.extend(getattr(page, field))
        cursor = page.next_cursor
        if not cursor:
            return items
    raise CliError(f"{method} still had pages after {MAX_PAGES}", status=1)


async def offer_of(client: Client) -> Offer:
    """Every listing the server's capabilities advertise, all pages."""
    can = client.server_capabilities
    tools = resources = templates = prompts = []
    if can.tools is not None:
        tools = await _pages("tools/list", lambda c: client.list_tools(cursor=c), "tools")
    if can.resources is not None:
        resources = await _pages(
            "resources/list", lambda c: client.list_resources(cursor=c), "resources"
        )
        templates = await _pages(
            "resources/templates/list",
            lambda c: client.list_resource_templates(cursor=c),
            "resource_templates",
        )
    if can.prompts is not None:
        prompts = await _pages("prompts/list", lambda c: client.list_prompts(cursor=c), "prompts")
    return Offer(client.server_info, client.protocol_version, tools, resources, templates, prompts)


def tool_arguments(tool: types.Tool) -> str:
    """A tool's arguments from its input schema: required ones plain, optional ones with ``?``.

    >>> schema = {"type": "object", "properties": {"name": {}, "loud": {}}, "required": ["name"]}
    >>> tool_arguments(types.Tool(name="greet", input_schema=schema))
    'name, loud?'
    """
    schema = tool.input_schema
    required = set(schema.get("required", ()))
    names = list(schema.get("properties", {}))
    return ", ".join(name if name in required else f"{name}?" for name in names) or "-"


def render(offer: Offer, where: str) -> list[str]:
    server = offer.server
    who = "(unnamed server)" if server is None else f"{server.name} {server.version}".rstrip()
    lines = [f"{who}: {where}; protocol {offer.protocol_version}"]
    rows = [
        [
            tool.name,
            tool.title or (tool.annotations.title if tool.annotations else None) or "-",
            tool_arguments(tool),
            describe_annotations(tool.annotations),
        ]
        for tool in offer.tools
    ]
    lines += [
        "",
        *(table(["TOOL", "TITLE", "ARGUMENTS", "ANNOTATIONS"], rows) if rows else ["(no tools)"]),
    ]
    if offer.resources:
        rows = [[r.name, str(r.uri), r.mime_type or "-"] for r in offer.resources]
        lines += ["", *table(["RESOURCE", "URI", "MIME TYPE"], rows)]
    if offer.templates:
        rows = [[t.name, t.uri_template, t.mime_type or "-"] for t in offer.templates]
        lines += ["", *table(["TEMPLATE", "URI TEMPLATE", "MIME TYPE"], rows)]
    if offer.prompts:
        rows = [[p.name, p.title or "-", _prompt_arguments(p)] for p in offer.prompts]
        lines += ["", *table(["PROMPT", "TITLE", "ARGUMENTS"], rows)]
    return lines


def _prompt_arguments(prompt: types.Prompt) -> str:
    arguments = prompt.arguments or []
    return ", ".join(a.name if a.required else f"{a.name}?" for a in arguments) or "-"


async def inspect(reach: Reach) -> Offer:
    async with connected(reach) as client:
        return await offer_of(client)


def run(args: argparse.Namespace) -> int:
    reach = reach_of(args)
    try:
        offer = anyio.run(inspect, reach)
    except MCPError as exc:
        raise CliError(f"listing failed: {exc.error.message} ({exc.error.code})", status=1) from exc
    if args.json:
        print(json.dumps(offer.to_json(), indent=2, ensure_ascii=False))
    else:
        print("\n".join(render(offer, reach.describe())))
    return 0


COMMAND = Command(
    "inspect",
    help="show what a server (a URL, or a target run here) offers to a client",
    description="Connect as a client and list the server's tools, resources, resource "
    "templates and prompts (every page), as tables or, with --json, as the protocol's "
    "objects.",
    arguments=add_arguments,
    run=run,
)
