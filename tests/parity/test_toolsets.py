"""Toolsets: a function tool belongs to its extension's toolset (``Catalog.select`` keeps it);
a class tool of the ``Server`` declaration served by the same kind of ``Platform`` should
be selectable the same way."""

from __future__ import annotations

from mcp_adapter import Platform
from tests.parity.kit import Arg, Call, Case, class_tool_server, function_servable, new_container

CASE = Case("toolset", fields=(Arg("name", str),), calls=(Call({"name": "a"}, "ok"),))


def membership(platform: Platform) -> dict[str, object]:
    catalog = platform.compile(new_container())
    return {
        "has a toolset": bool(catalog.tools[CASE.tool].toolset),
        "kept by selecting every toolset": CASE.tool in catalog.select(catalog.toolsets).tools,
    }


def test_function_tool_has_its_extensions_toolset() -> None:
    catalog = function_servable(CASE).compile(new_container())
    assert catalog.tools[CASE.tool].toolset == "functions"


def test_toolset_membership_matches() -> None:
    classes = membership(Platform([], server=class_tool_server(CASE)))
    functions = membership(function_servable(CASE))
    assert functions == {"has a toolset": True, "kept by selecting every toolset": True}
    assert classes == functions
