"""``mcp-adapter make:mcp-tool NAME`` (and server, resource, prompt): write a new component."""

from __future__ import annotations

import argparse
import functools
import keyword
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any

from mcp_adapter.cli.errors import CliError
from mcp_adapter.cli.parsing import Command
from mcp_adapter.cli.safe_files import write_below


@dataclass(frozen=True, slots=True)
class Kind:
    command: str
    suffix: str
    """``tool`` -> ``echo_tool.py`` and ``EchoTool``."""
    folder: str
    template: str
    publish: str


KINDS = (
    Kind("make:mcp-tool", "tool", "app/mcp/tools", "tool.tmpl", "add {cls} to your Server's tools"),
    Kind(
        "make:mcp-server",
        "server",
        "app/mcp/servers",
        "server.tmpl",
        "serve it with `mcp-adapter serve {module}:{cls}`",
    ),
    Kind(
        "make:mcp-resource",
        "resource",
        "app/mcp/resources",
        "resource.tmpl",
        "add {cls} to your Server's resources",
    ),
    Kind(
        "make:mcp-prompt",
        "prompt",
        "app/mcp/prompts",
        "prompt.tmpl",
        "add {cls} to your Server's prompts",
    ),
)


@dataclass(frozen=True, slots=True)
class Target:
    folders: tuple[str, ...]
    """Nested folders under the kind's folder (``support`` in ``support/find_ticket``)."""
    stem: str
    """Snake-case base name without the suffix: ``find_ticket``."""
    class_name: str
    public_name: str
    file_name: str


def _snake(word: str) -> str:
    word = word.replace("-", "_")
    word = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", word)
    word = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", word)
    return word.lower()


def _valid_segment(segment: str) -> bool:
    return segment.isidentifier() and not keyword.iskeyword(segment) and segment.isascii()


def target_of(name: str, suffix: str) -> Target:
    """Where ``name`` goes and what its class is called.

    >>> target_of("support/find_ticket", "tool").class_name
    'FindTicketTool'
    >>> target_of("EchoTool", "tool").file_name
    'echo_tool.py'
    """
    hint = "use letters, digits and underscores, with / between folders: support/find_ticket"
    if not name.strip():
        raise CliError("the name is empty", hint)
    if "\\" in name or PurePosixPath(name).is_absolute() or re.match(r"^[A-Za-z]:", name):
        raise CliError(f"{name!r} is an absolute path; names are relative to the folder", hint)
    parts = name.strip().strip("/").split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise CliError(f"{name!r} would leave the target folder or has an empty part", hint)
    folders = tuple(parts[:-1])
    stem = _snake(parts[-1].removesuffix(".py"))
    stem = stem.removesuffix(f"_{suffix}") if stem != suffix else stem
    for segment in (*folders, stem):
        if not _valid_segment(segment):
            raise CliError(f"{segment!r} in {name!r} is not a valid Python identifier", hint)
    class_name = "".join(word.capitalize() for word in stem.split("_") if word)
    return Target(
        folders=folders,
        stem=stem,
        class_name=f"{class_name}{suffix.capitalize()}",
        public_name=stem.replace("_", "-"),
        file_name=f"{stem}_{suffix}.py",
    )


def render(kind: Kind, target: Target) -> str:
    text = resources.files("mcp_adapter.templates").joinpath(kind.template).read_text("utf-8")
    return text.format(class_name=target.class_name, public_name=target.public_name)


def add_arguments(kind: Kind, parser: argparse.ArgumentParser) -> None:
    """The arguments of ``make:mcp-KIND``."""
    parser.add_argument("name", metavar="NAME", help="e.g. echo or support/find_ticket")
    parser.add_argument(
        "--path",
        metavar="FOLDER",
        default=kind.folder,
        help=f"target folder (default {kind.folder})",
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing file")


def add_parsers(commands: Any, common: argparse.ArgumentParser) -> None:
    for kind in KINDS:
        Command(
            kind.command,
            help=f"create a new MCP {kind.suffix} class in {kind.folder}/",
            description=f"Create {kind.folder}/NAME_{kind.suffix}.py. NAME may be nested "
            f"(support/find_ticket); it never overwrites a file unless --force.",
            arguments=functools.partial(add_arguments, kind),
            run=run,
            defaults={"kind": kind},
        ).add_parser(commands, common)


def run(args: argparse.Namespace) -> int:
    kind: Kind = args.kind
    target = target_of(args.name, kind.suffix)
    path = write_below(
        Path(args.path),
        target.folders,
        target.file_name,
        render(kind, target),
        replace=args.force,
    )
    module = ".".join(path.with_suffix("").parts)
    print(f"Created {path} ({target.class_name})")
    print("  next: " + kind.publish.format(cls=target.class_name, module=module))
    return 0
