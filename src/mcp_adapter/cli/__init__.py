"""The ``mcp-adapter`` command: serve, dev, worker, call, inspect, list, check and the
``make:mcp-*`` generators; the top of the package, it may import any part of it."""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence

from _mcp_adapter_di import version_line
from mcp_adapter.cli import calling, check, dev, inspecting, listing, make, serve, worker
from mcp_adapter.cli.errors import CliError
from mcp_adapter.cli.parsing import CliParser
from mcp_adapter.distribution import DISTRIBUTION, HintedImportError

__all__ = ["CliError", "build_parser", "main", "version_line"]


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the full traceback of a failure",
    )
    parser = CliParser(
        prog="mcp-adapter",
        description="Serve, call, inspect and scaffold MCP servers written with mcp_adapter.",
    )
    parser.add_argument("--debug", action="store_true", help="show the full traceback of a failure")
    parser.add_argument(
        "--version", action="store_true", help=f"print the version of {DISTRIBUTION} and exit"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in (serve, dev, worker, calling, inspecting, listing, check):
        command.COMMAND.add_parser(commands, common)
    make.add_parsers(commands, common)
    return parser


def _fail(exc: CliError, *, debug: bool) -> int:
    for line in exc.lines(debug=debug):
        print(line, file=sys.stderr)
    return exc.status


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the process exit status."""
    parser = build_parser()
    debug = False
    try:
        args = parser.parse_args(argv)
        debug = bool(args.debug)
        if args.version:
            print(version_line())
            return 0
        if args.command is None:
            parser.print_help(sys.stderr)
            return 2
        status: int = args.run(args)
    except CliError as exc:
        if debug:
            traceback.print_exception(exc)
        return _fail(exc, debug=debug)
    except HintedImportError as exc:  # an extra not installed, a package shadowed
        return _fail(CliError(exc.message, exc.hint), debug=debug)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if debug:
            raise
        return _fail(
            CliError(f"{type(exc).__name__}: {exc}", status=1, traceback=True), debug=debug
        )
    return status
