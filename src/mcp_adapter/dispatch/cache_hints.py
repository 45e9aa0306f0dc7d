"""Freshness hints (``ttlMs``/``cacheScope``, 2026-07-28) of listings and reads, per component.

The SDK fills a hint a result leaves unset from the server-wide
``Server.cache_hints`` (``Server(cache_hints=...)``). A result sets its own when
its components declare one (``Component.cache``), or when what it holds depends
on who asks (a component with ``shouldRegister``/``authorize`` hooks): a page is
then as fresh as its least fresh entry, and private when any entry is, or is
personal, so a shared cache never serves one caller's answer to another.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, TypeVar

from mcp.server.caching import CacheHint, apply_cache_hint
from mcp.types import CacheableResult

from mcp_adapter.compiled.catalog import CompiledComponent

R = TypeVar("R", bound=CacheableResult)
_UNHINTED = CacheHint()
"""What a result carries when nothing is declared: immediately stale, private (the SDK's)."""


def _personal(hint: CacheHint, personal: bool) -> CacheHint:
    return CacheHint(hint.ttl_ms, "private") if personal and hint.scope == "public" else hint


def combined(components: Sequence[CompiledComponent], server: CacheHint | None) -> CacheHint | None:
    """The hint a result about ``components`` sets itself; ``None``: the server's applies."""
    personal = any(component.hooks.any for component in components)
    if not personal and all(component.cache is None for component in components):
        return None
    fallback = server or _UNHINTED
    hints = [component.cache or fallback for component in components]
    ttl = min(hint.ttl_ms for hint in hints)
    scope: Literal["public", "private"] = (
        "public" if all(hint.scope == "public" for hint in hints) else "private"
    )
    return _personal(CacheHint(ttl, scope), personal)


def page_hints(
    pages: Sequence[Sequence[CompiledComponent]],
    method: str,
    server: Mapping[str, CacheHint],
) -> tuple[CacheHint | None, ...]:
    """The hint of each listing page (decided once, when the pages are)."""
    return tuple(combined(page, server.get(method)) for page in pages)


def hinted(result: R, hint: CacheHint | None) -> R:
    """``result`` with ``hint``'s fields (the handler's own are kept)."""
    return result if hint is None else apply_cache_hint(result, hint)
