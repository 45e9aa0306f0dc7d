"""The ``mcp-adapter`` command: serve, list, check and the ``make:mcp-*`` generators; the
top of the package, it may import any part of it."""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence

from mcp_adapter.cli import check, listing, make, serve
from mcp_adapter.cli.errors import CliError

__all__ = ["CliError", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the full traceback of a failure",
    )
    parser = argparse.ArgumentParser(
        prog="mcp-adapter",
        description="Serve, inspect and scaffold MCP servers written with mcp_adapter.",
    )
    parser.add_argument("--debug", action="store_true", help="show the full traceback of a failure")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve.add_parser(commands, common)
    listing.add_parser(commands, common)
    check.add_parser(commands, common)
    make.add_parsers(commands, common)
    return parser


def _fail(exc: CliError) -> int:
    print(f"error: {exc.message}", file=sys.stderr)
    for line in exc.details:
        print(f"  {line}", file=sys.stderr)
    if exc.hint:
        print(f"hint: {exc.hint}", file=sys.stderr)
    return exc.status


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the process exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        status: int = args.run(args)
    except CliError as exc:
        if args.debug:
            traceback.print_exception(exc)
        return _fail(exc)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if args.debug:
            raise
        return _fail(
            CliError(
                f"{type(exc).__name__}: {exc}",
                "run again with --debug to see the traceback",
                status=1,
            )
        )
    return status
