"""Applying ``ToolExtension``s to tools: wrap, amend, replace; report conflicts.

Contributed tools are amended in place (their ``ToolSpec`` changes); class tools
of a ``Server`` declaration have no spec, so what extends them is returned as an
``Amendment`` that ``extend_compiled`` applies to the compiled tool: the same
listing changes, and the same middleware layers outside the tool's own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from container import Container, Problem
from mcp_adapter.compile.middleware import plan_layers
from mcp_adapter.compiled.catalog import CompiledTool, Hooks
from mcp_adapter.declare.annotations import to_protocol_annotations
from mcp_adapter.declare.middleware import Middleware
from mcp_adapter.errors import problem
from mcp_adapter.extensions.manifest import PluginManifest
from mcp_adapter.extensions.points import Contribution
from mcp_adapter.extensions.spec import ToolExtension, ToolSpec


@dataclass(slots=True)
class Entry:
    """A contributed tool while the platform assembles it."""

    spec: ToolSpec
    plugin: PluginManifest
    owner: type
    toolset: str
    middleware: list[Middleware] = field(default_factory=list)
    governing: Hooks = field(default_factory=Hooks)
    """The contributing extension's ``policies``, planned once for all its tools (a
    replacement keeps them)."""


@dataclass(slots=True)
class Amendment:
    """What extensions change of a class tool: the amended fields and the middleware.

    ``changes`` holds ``description``, ``title``, ``annotations`` (replacing the
    class's) and ``meta`` (only the extensions' keys: merged over the class's).
    """

    changes: dict[str, Any] = field(default_factory=dict)
    middleware: list[Middleware] = field(default_factory=list)


def _who(contributions: Sequence[Contribution[Any]]) -> str:
    return ", ".join(sorted({c.plugin.name for c in contributions}))


def _single(
    name: str,
    what: str,
    offers: list[tuple[Contribution[ToolExtension], Any]],
    problems: list[Problem],
) -> Any:
    """The one value offered for a field, ``None`` when none; different values conflict."""
    values: list[Any] = []
    for _, value in offers:
        if value not in values:
            values.append(value)
    if len(values) > 1:
        problems.append(
            problem(
                (f"tool {name!r}",),
                f"conflicting {what} of tool {name!r} from {_who([c for c, _ in offers])}",
                "only one extension may set it: remove all but one",
            )
        )
        return None
    return values[0] if values else None


def _meta(
    name: str, group: Sequence[Contribution[ToolExtension]], problems: list[Problem]
) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    owners: dict[str, Contribution[ToolExtension]] = {}
    for contribution in group:
        for key, value in (contribution.value.meta or {}).items():
            if key in merged and merged[key] != value:
                problems.append(
                    problem(
                        (f"tool {name!r}",),
                        f"conflicting meta {key!r} of tool {name!r} from "
                        f"{_who([owners[key], contribution])}",
                        "only one extension may set a meta key: remove all but one",
                    )
                )
                continue
            merged[key] = value
            owners[key] = contribution
    return merged


def apply(
    tools: dict[str, Entry],
    extensions: Sequence[Contribution[ToolExtension]],
    problems: list[Problem],
    *,
    owner_of: Any,
    class_tools: Collection[str] = (),
) -> dict[str, Amendment]:
    """Apply every extension to ``tools`` in place, in contribution order.

    Extensions of ``class_tools`` (the names of a ``Server`` declaration's tools)
    are returned by name, to apply once those are compiled; a class tool cannot
    be replaced.
    """
    groups: dict[str, list[Contribution[ToolExtension]]] = {}
    for contribution in extensions:
        value: Any = contribution.value
        if not isinstance(value, ToolExtension):
            problems.append(
                problem(
                    (contribution.plugin.name,),
                    f"{contribution.plugin.name} contributed {value!r} at {contribution.point}, "
                    "not a ToolExtension",
                )
            )
            continue
        groups.setdefault(value.name, []).append(contribution)
    amended: dict[str, Amendment] = {}
    for name, group in groups.items():
        entry = tools.get(name)
        if entry is None and name in class_tools:
            _refuse_replacement(name, group, problems)
            amendment = _amendment(name, group, problems)
            if amendment.changes or amendment.middleware:
                amended[name] = amendment
            continue
        if entry is None:
            problems.append(_unknown(name, group, tools, class_tools))
            continue
        _replace(name, entry, group, problems, owner_of)
        amendment = _amendment(name, group, problems)
        changes = amendment.changes
        if "meta" in changes:
            changes["meta"] = {**(entry.spec.meta or {}), **changes["meta"]}
        if changes:
            entry.spec = dataclasses.replace(entry.spec, **changes)
        entry.middleware.extend(amendment.middleware)
    return amended


def _amendment(
    name: str, group: Sequence[Contribution[ToolExtension]], problems: list[Problem]
) -> Amendment:
    """The fields ``group`` sets (conflicts reported) and its middleware, outermost first."""
    amendment = Amendment()
    for what, attribute in (
        ("descriptions", "description"),
        ("titles", "title"),
        ("annotations", "annotations"),
    ):
        offers = [(c, getattr(c.value, attribute)) for c in group]
        value = _single(name, what, [o for o in offers if o[1] is not None], problems)
        if value is not None:
            amendment.changes[attribute] = value
    meta = _meta(name, group, problems)
    if meta:
        amendment.changes["meta"] = meta
    amendment.middleware = [c.value.middleware for c in group if c.value.middleware is not None]
    return amendment


def _refuse_replacement(
    name: str, group: Sequence[Contribution[ToolExtension]], problems: list[Problem]
) -> None:
    offers = [c for c in group if c.value.replace is not None]
    if offers:
        problems.append(
            problem(
                (_who(offers), f"tool {name!r}"),
                f"{_who(offers)} replaces tool {name!r}, a class tool of the Server declaration",
                "a class tool cannot be replaced by name: take it out of the declaration's "
                "tools and contribute the replacement as a ToolSpec, or extend it (middleware, "
                "description, title, annotations, meta)",
            )
        )


def _replace(
    name: str,
    entry: Entry,
    group: Sequence[Contribution[ToolExtension]],
    problems: list[Problem],
    owner_of: Any,
) -> None:
    offers = [(c, c.value.replace) for c in group if c.value.replace is not None]
    replacement = _single(name, "replacements", offers, problems)
    if replacement is None:
        return
    if not isinstance(replacement, ToolSpec) or replacement.name != name:
        problems.append(
            problem(
                (f"tool {name!r}",),
                f"the replacement of tool {name!r} from {_who([c for c, _ in offers])} "
                f"is not a ToolSpec named {name!r}",
            )
        )
        return
    original = entry.spec
    entry.spec = dataclasses.replace(
        replacement,
        toolset=replacement.toolset or entry.toolset,
        # a replacement cannot drop the original's visibility hooks, only set its own
        should_register=_either(replacement.should_register, original.should_register),
        authorize=_either(replacement.authorize, original.authorize),
        policies=(
            *original.policies,
            *(p for p in replacement.policies if all(p is not q for q in original.policies)),
        ),
    )
    entry.toolset = entry.spec.toolset
    entry.owner = owner_of(replacement.handler)


def _either(own: Any, original: Any) -> Any:
    return original if own is None else own


def _unknown(
    name: str,
    group: Sequence[Contribution[ToolExtension]],
    tools: dict[str, Entry],
    class_tools: Collection[str],
) -> Problem:
    hint = f"contributed tools: {', '.join(sorted(tools)) or 'none'}"
    if class_tools:
        hint += f"; class tools of the Server declaration: {', '.join(sorted(class_tools))}"
    return problem(
        (_who(group), f"tool {name!r}"),
        f"{_who(group)} extends tool {name!r}, which no extension contributed and the Server "
        "declaration does not declare",
        hint,
    )


def extend_compiled(
    tool: CompiledTool, amendment: Amendment, container: Container, problems: list[Problem]
) -> CompiledTool | None:
    """A compiled class tool as extensions extend it by name: ``description``, ``title``,
    ``annotations`` replace its own, ``meta`` is merged, and the middleware runs outside
    the tool's own layers, as for a contributed tool."""
    before = len(problems)
    layers = plan_layers(amendment.middleware, f"tool {tool.name!r}", container, problems)
    update = dict(amendment.changes)
    if "annotations" in update:
        update["annotations"] = to_protocol_annotations(update["annotations"])
    if "meta" in update:
        update["meta"] = {**(tool.modern.meta or {}), **update["meta"]}
    if len(problems) > before:
        return None
    return dataclasses.replace(
        tool,
        modern=tool.modern.model_copy(update=update),
        legacy=tool.legacy.model_copy(update=update),
        middleware=(*layers, *tool.middleware),
    )
