"""Applying ``ToolExtension``s to contributed tools: wrap, amend, replace; report conflicts."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from container import Problem
from mcp_adapter.errors import problem
from mcp_adapter.extensions.manifest import PluginManifest
from mcp_adapter.extensions.points import Contribution
from mcp_adapter.extensions.spec import Middleware, ToolExtension, ToolSpec


@dataclass(slots=True)
class Entry:
    """A contributed tool while the platform assembles it."""

    spec: ToolSpec
    plugin: PluginManifest
    owner: type
    toolset: str
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
) -> None:
    """Apply every extension to ``tools`` in place, in contribution order."""
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
    for name, group in groups.items():
        entry = tools.get(name)
        if entry is None:
            problems.append(_unknown(name, group, tools, class_tools))
            continue
        _replace(name, entry, group, problems, owner_of)
        changes: dict[str, Any] = {}
        for what, attribute in (
            ("descriptions", "description"),
            ("titles", "title"),
            ("annotations", "annotations"),
        ):
            offers = [(c, getattr(c.value, attribute)) for c in group]
            value = _single(name, what, [o for o in offers if o[1] is not None], problems)
            if value is not None:
                changes[attribute] = value
        meta = _meta(name, group, problems)
        if meta:
            changes["meta"] = {**(entry.spec.meta or {}), **meta}
        if changes:
            entry.spec = dataclasses.replace(entry.spec, **changes)
        for contribution in group:
            if contribution.value.middleware is not None:
                entry.middleware.append(contribution.value.middleware)


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
    if name in class_tools:
        hint = f"{name!r} is a class tool of the Server declaration; only contributed tools extend"
    else:
        hint = f"contributed tools: {', '.join(sorted(tools)) or 'none'}"
    return problem(
        (_who(group), f"tool {name!r}"),
        f"{_who(group)} extends tool {name!r}, which no extension contributed",
        hint,
    )
