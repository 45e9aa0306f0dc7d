"""``mcp-adapter call URL_OR_TARGET TOOL key=value ...``: one ``tools/call``, its result printed."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

import anyio
from mcp import MCPError, types

from mcp_adapter.cli.connecting import Reach, add_reach_arguments, connected, plain, reach_of
from mcp_adapter.cli.errors import CliError
from mcp_adapter.cli.parsing import Command

ARGUMENTS_HINT = """for example: name=Ada count=3 'tags=["a","b"]' (or --json '{"name": "Ada"}')"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``call``."""
    add_reach_arguments(parser)
    parser.add_argument("tool", metavar="TOOL", help="the tool's name")
    parser.add_argument(
        "arguments",
        metavar="KEY=VALUE",
        nargs="*",
        help='an argument: count=3, flag=true and tags=["a"] are JSON; name=Ada is a string '
        '(name=\'"3"\' is the string "3")',
    )
    parser.add_argument(
        "--json",
        dest="json_arguments",
        metavar="OBJECT",
        help="the arguments as one JSON object; KEY=VALUE pairs add to it",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text: the result's content (default); json: the whole CallToolResult",
    )


def value_of(raw: str) -> Any:
    """``raw`` read as JSON when it is JSON (not ``NaN`` or ``Infinity``), else the string.

    >>> value_of("3"), value_of("true"), value_of('["a"]'), value_of("Ada"), value_of('"3"')
    (3, True, ['a'], 'Ada', '3')
    >>> value_of("NaN"), value_of("")
    ('NaN', '')
    """
    try:
        return json.loads(raw, parse_constant=_not_json)
    except ValueError:
        return raw


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def arguments_of(pairs: Sequence[str], whole: str | None) -> dict[str, Any]:
    """The ``tools/call`` arguments from ``--json`` and the ``KEY=VALUE`` pairs."""
    arguments: dict[str, Any] = {}
    if whole is not None:
        try:
            found = json.loads(whole, parse_constant=_not_json)
        except ValueError as exc:
            raise CliError(f"--json is not JSON: {exc}", ARGUMENTS_HINT) from None
        if not isinstance(found, dict):
            raise CliError(
                f"--json must be a JSON object ({{...}}), not {type(found).__name__}",
                ARGUMENTS_HINT,
            )
        arguments.update(found)
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise CliError(f"{pair!r} is not KEY=VALUE", ARGUMENTS_HINT)
        if key in arguments:
            raise CliError(f"the argument {key!r} is given twice", "give each argument once")
        arguments[key] = value_of(raw)
    return arguments


def render(result: types.CallToolResult) -> list[str]:
    """The result's content as text: each block's text, a line for what is not text, and
    the structured content when no block carries text."""
    lines: list[str] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            lines.append(block.text)
        elif isinstance(block, types.ImageContent | types.AudioContent):
            lines.append(f"[{block.type}: {block.mime_type}, {len(block.data)} base64 characters]")
        elif isinstance(block, types.ResourceLink):
            lines.append(f"[resource link: {block.uri}]")
        elif isinstance(block, types.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, types.TextResourceContents):
                lines.append(resource.text)
            else:
                lines.append(f"[resource: {resource.uri}, {len(resource.blob)} base64 characters]")
    texts = any(isinstance(block, types.TextContent) for block in result.content)
    if not texts and result.structured_content is not None:
        lines.append(json.dumps(result.structured_content, indent=2, ensure_ascii=False))
    return lines


async def call(reach: Reach, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
    async with connected(reach) as client:
        return await client.call_tool(tool, arguments)


def run(args: argparse.Namespace) -> int:
    reach = reach_of(args)
    arguments = arguments_of(args.arguments, args.json_arguments)
    try:
        result = anyio.run(call, reach, args.tool, arguments)
    except MCPError as exc:
        raise CliError(
            f"tools/call {args.tool!r} failed: {exc.error.message} ({exc.error.code})",
            f"`mcp-adapter inspect {reach.target}` lists the tools and what each takes",
            status=1,
        ) from exc
    if args.format == "json":
        print(json.dumps(plain(result), indent=2, ensure_ascii=False))
    else:
        print("\n".join(render(result)))
    if result.is_error:
        print(f"error: the tool {args.tool!r} answered with an error result", file=sys.stderr)
        return 1
    return 0


COMMAND = Command(
    "call",
    help="call a tool of a server (a URL, or a target run here) and print its result",
    description="Call TOOL with the arguments given as KEY=VALUE pairs (each VALUE read as "
    "JSON when it is JSON, else as a string) and/or one --json object, and print the "
    "result's content. Exit 1 when the tool answers with an error result.",
    arguments=add_arguments,
    run=run,
)
