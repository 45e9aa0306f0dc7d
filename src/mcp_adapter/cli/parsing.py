"""argparse in the CLI's voice: a usage mistake is one ``error:`` line and one ``hint:``
line (exit status 2), not argparse's usage block; and what every command's parser is
made of (``Command``)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from mcp_adapter.cli.errors import CliError

_FLAG = r"argument ([^/\s]+)(?:/\S+)?"
"""argparse names ``--http/--no-http`` both ways; the rewrite keeps the first."""
_REWRITES = (
    (re.compile(rf"^{_FLAG}: invalid int value: (.*)$"), r"\1 \2 is not an integer"),
    (re.compile(rf"^{_FLAG}: invalid float value: (.*)$"), r"\1 \2 is not a number"),
    (re.compile(rf"^{_FLAG}: expected one argument$"), r"\1 needs a value"),
    (
        re.compile(rf"^{_FLAG}: invalid choice: ('[^']*') \((choose from .*)\)$"),
        r"\2 is not a valid \1 (\3)",
    ),
    (re.compile(rf"^{_FLAG}: ignored explicit argument (.*)$"), r"\1 takes no value (got \2)"),
    (re.compile(r"^the following arguments are required: (.*)$"), r"missing \1"),
    (re.compile(r"^unrecognized arguments: (.*)$"), r"unknown arguments: \1"),
)


def reworded(message: str) -> str:
    """argparse's message in the CLI's words (unchanged when no rule applies).

    >>> reworded("argument --port: invalid int value: 'abc'")
    "--port 'abc' is not an integer"
    >>> reworded("argument COMMAND: invalid choice: 'sevre' (choose from 'serve', 'list')")
    "'sevre' is not a valid COMMAND (choose from 'serve', 'list')"
    >>> reworded("argument --http/--no-http: ignored explicit argument '1'")
    "--http takes no value (got '1')"
    """
    for pattern, replacement in _REWRITES:
        if pattern.match(message):
            return pattern.sub(replacement, message)
    return message


class CliParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are :class:`CliError` s (status 2) naming the
    command's ``--help``; its sub-commands' parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        raise CliError(reworded(message), f"`{self.prog} --help` shows what it takes")


@dataclass(frozen=True, slots=True)
class Command:
    """One command of ``mcp-adapter``: its name, help line and description, its own
    arguments, and what runs it (given the parsed arguments, it returns the exit status)."""

    name: str
    help: str
    description: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    defaults: Mapping[str, Any] = field(default_factory=dict)
    """Values the parsed arguments carry besides the command's own."""

    def add_parser(self, commands: Any, common: argparse.ArgumentParser) -> None:
        """Add the command to ``commands`` (the top parser's sub-parsers), with the
        options every command takes (``common``)."""
        parser = commands.add_parser(
            self.name, parents=[common], help=self.help, description=self.description
        )
        self.arguments(parser)
        parser.set_defaults(run=self.run, **self.defaults)
