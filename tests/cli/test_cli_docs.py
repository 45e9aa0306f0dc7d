"""docs/cli.md documents every command and every flag the parser has, and its ``list`` and
``inspect`` examples of the demo are what the commands print."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from mcp_adapter.cli import build_parser, main

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {"": parser, **sub.choices}


def _flags(parser: argparse.ArgumentParser) -> set[str]:
    return {
        option
        for action in parser._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    }


@pytest.mark.parametrize("command", sorted(_commands()))
def test_every_flag_of_every_command_is_documented(command: str) -> None:
    text = DOCS.read_text(encoding="utf-8")
    if command and not command.startswith("make:"):
        assert f"## `{command}`" in text, f"docs/cli.md has no section for {command}"
    if command.startswith("make:"):
        assert f"`{command}" in text
    undocumented = sorted(flag for flag in _flags(_commands()[command]) if f"`{flag}" not in text)
    assert undocumented == [], f"mcp-adapter {command}: flags missing from docs/cli.md"


def _example(command: str) -> tuple[list[str], list[str]]:
    """The arguments and the printed lines of the docs' ``$ mcp-adapter COMMAND ...`` block."""
    text = DOCS.read_text(encoding="utf-8")
    found = re.search(rf"```sh\n\$ mcp-adapter ({command} [^\n]+)\n(.*?)```", text, re.DOTALL)
    assert found, f"docs/cli.md has no example of {command}"
    return shlex.split(found.group(1)), found.group(2).splitlines()


@pytest.mark.parametrize("command", ["list", "inspect"])
def test_the_documented_output_is_the_real_one(
    command: str, in_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args, printed = _example(command)
    assert main(args) == 0
    assert capsys.readouterr().out.splitlines() == printed
