"""``mcp-adapter check``: compile and validate everything, report every problem at once."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from container import Container, Lifetime, Problem, type_name
from mcp_adapter.cli.loading import load_container, load_servable
from mcp_adapter.cli.parsing import Command
from mcp_adapter.cli.settings import add_container_option
from mcp_adapter.cli.wording import count
from mcp_adapter.compile.published import published_schema_problems
from mcp_adapter.compiled.catalog import Catalog
from mcp_adapter.declare.components import Server, Tool
from mcp_adapter.declare.handles import StateHandle
from mcp_adapter.declare.naming import default_name
from mcp_adapter.errors import CompileError
from mcp_adapter.errors import problem as declaration_problem
from mcp_adapter.input.questions import NOTHING
from mcp_adapter.serving import NotServableError, catalog_of


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``check``."""
    parser.add_argument("target", metavar="MODULE:ATTR", help="the server")
    add_container_option(parser)


def unannotated(catalog: Catalog) -> list[str]:
    return [name for name, tool in catalog.tools.items() if tool.modern.annotations is None]


def declared_unannotated(target: Any) -> list[str]:
    """Without a catalog (it did not compile): the tools a ``Server`` class declares with
    no annotations, by the name each declares (else its default name)."""
    if not (isinstance(target, type) and issubclass(target, Server)):
        return []
    names = []
    for cls in tuple(target.tools):
        if isinstance(cls, type) and issubclass(cls, Tool) and cls.annotations is None:
            declared = cls.__dict__.get("name")
            names.append(
                str(declared if declared is not None else default_name(cls.__name__, "Tool"))
            )
    return names


def session_scoped(container: Container) -> list[str]:
    return sorted(
        type_name(key)
        for key, binding in container.bindings.items()
        if binding.lifetime is Lifetime.SESSION and key is not StateHandle
    )


def warnings(catalog: Catalog | None, target: Any) -> list[str]:
    names = unannotated(catalog) if catalog is not None else declared_unannotated(target)
    lines: list[str] = []
    for name in names:
        lines.append(
            f"warning: tool {name!r} has no annotations: clients assume it is not "
            "read-only, may be destructive, not idempotent and open-world"
        )
        lines.append(
            "    hint: set annotations = ToolAnnotations(read_only=..., destructive=..., "
            "idempotent=..., open_world=...)"
        )
    return lines


def notes(catalog: Catalog | None, container: Container) -> list[str]:
    """What holds on one transport but not another; the HTTP-only components need the
    compiled catalog, the session-scoped services only the container."""
    lines: list[str] = []
    if catalog is not None:
        lines.extend(
            f"note: {kind} {name!r} needs the HTTP request: it works over HTTP only "
            "(serving it over stdio is refused)"
            for kind, name in catalog.http_only()
        )
        lines.extend(asking(catalog))
        lines.extend(state_handles(catalog))
    sessions = session_scoped(container)
    if sessions:
        lines.append(
            f"note: session-scoped: {', '.join(sessions)}: one per 2025-11-25 session on "
            "stdio and stateful HTTP; one per request on stateless HTTP and in 2026-07-28; "
            "one per state handle for the calls that carry one"
        )
    return lines


def state_handles(catalog: Catalog) -> list[str]:
    """Which tools mint state handles (they take ``StateHandles``) and which take one back
    (a ``StateHandle`` field of their input)."""
    tools = catalog.tools.values()
    minting = [repr(tool.name) for tool in tools if tool.mints]
    taking = [
        f"{tool.name!r} (argument {tool.handle.wire!r})"
        for tool in tools
        if tool.handle is not None
    ]
    lines: list[str] = []
    if minting:
        lines.append(
            "note: tools that mint or close state handles (they take StateHandles): "
            + ", ".join(minting)
        )
    if taking:
        lines.append(f"note: tools that take a state handle: {', '.join(taking)}")
    return lines


def asking(catalog: Catalog) -> list[str]:
    """Which components may ask the client for input, and for what: from their resolvers'
    return annotations (a resolver that declares none may ask anything)."""
    lines: list[str] = []
    for kind, components in (
        ("tool", list(catalog.tools.values())),
        ("resource", [*catalog.resources.values(), *catalog.templates]),
        ("prompt", list(catalog.prompts.values())),
    ):
        for component in components:
            asks = [
                f"{resolver.asks or 'any question (its return annotation names none)'} "
                f"({resolver.label})"
                for resolver in component.inputs
                if resolver.asks != NOTHING
            ]
            if asks:
                lines.append(f"note: {kind} {component.name!r} may ask for: {', '.join(asks)}")
    return lines


def run(args: argparse.Namespace) -> int:
    container = load_container(args.container)
    target = load_servable(args.target)
    problems: list[Problem] = []
    catalog: Catalog | None = None
    try:
        catalog = catalog_of(target, container)
    except CompileError as exc:
        problems.extend(exc.problems)
    except NotServableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    problems.extend(p for p in container.check() if p not in problems)
    if catalog is not None:
        problems.extend(
            declaration_problem(
                (catalog.name,), found, "report it: the adapter published this schema"
            )
            for found in published_schema_problems(catalog)
        )
    # errors first, then the warnings and notes, which hold whether or not it compiled
    lines = [f"error: {problem.render()}" for problem in problems]
    lines += warnings(catalog, target)
    lines += notes(catalog, container)
    if lines:
        print("\n".join(lines))
    if problems:
        print(f"{args.target}: {count(len(problems), 'problem')}")
        return 1
    assert catalog is not None
    resources = len(catalog.resources) + len(catalog.templates)
    counted = (
        count(len(catalog.tools), "tool"),
        count(resources, "resource"),
        count(len(catalog.prompts), "prompt"),
    )
    print(f"{args.target}: ok ({', '.join(counted)})")
    return 0


COMMAND = Command(
    "check",
    help="compile a server and validate its container; exit 1 on any problem",
    description="Compile MODULE:ATTR against the container and validate every binding. "
    "Checks that every published input and output schema, in both protocol eras, is a "
    "valid, self-contained JSON Schema 2020-12. "
    "Prints every problem with its dependency path and exits 1 if there is any; "
    "warns (without failing) about tools whose annotations are unset; notes which "
    "components may ask the client for input, and for what.",
    arguments=add_arguments,
    run=run,
)
