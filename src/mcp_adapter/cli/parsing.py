"""argparse in the CLI's voice: a usage mistake is one ``error:`` line and one ``hint:``
line (exit status 2), not argparse's usage block."""

from __future__ import annotations

import argparse
import re
from typing import NoReturn

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
