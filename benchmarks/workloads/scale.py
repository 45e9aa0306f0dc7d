"""The scale workload: servers of many generated tools, compiled cold, and what they keep.

A server of ``size`` tool classes made with ``type()``, each tool with a small input
contract of its own from ``pydantic.create_model(__base__=Schema)``, with or without
a visibility hook (``def shouldRegister(self) -> bool: return True``).
"""

from __future__ import annotations

import functools
import gc
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import pydantic
from mcp.server import Server as SdkServer
from pydantic import Field

from benchmarks.harness.timing import collector
from container import Container
from mcp_adapter import McpResponse, Server, Tool, build_sdk_server, compile_server
from schemas import Contract, Schema

PAGE = 100
"""The catalog's page size (``Catalog.page_size``)."""


async def handle(self: Any, payload) -> McpResponse:  # type: ignore[no-untyped-def]
    """The handler every generated tool shares.

    ``payload`` stays unannotated: the adapter then gives it each tool's own input.
    """
    return McpResponse.text("ok")


class HookCalls:
    count = 0


def should_register(self: Any) -> bool:
    """The visibility hook of the ``with hook`` variant: always visible."""
    HookCalls.count += 1
    return True


@functools.cache
def models(size: int) -> list[type[Schema]]:
    """``size`` distinct small input contracts (made once per size and kept)."""
    return [
        pydantic.create_model(
            f"Scale{size}Input{i}",
            __base__=Schema,
            query=(str, Field(description=f"What tool {i} looks for")),
            limit=(int, Field(10, ge=1, le=100)),
        )
        for i in range(size)
    ]


@functools.cache
def server(size: int, hooks: bool) -> type[Server]:
    """A ``Server`` declaring ``size`` generated tool classes."""
    tools = []
    for i, contract in enumerate(models(size)):
        namespace: dict[str, Any] = {
            "__module__": __name__,
            "name": f"scale-{i}",
            "description": f"Generated tool {i} of {size}.",
            "input": contract,
            "handle": handle,
        }
        if hooks:
            namespace["shouldRegister"] = should_register
        tools.append(type(f"Scale{size}{'H' if hooks else ''}Tool{i}", (Tool,), namespace))
    return type(
        f"Scale{size}{'Hooked' if hooks else ''}Server",
        (Server,),
        {"__module__": __name__, "name": f"scale-{size}", "tools": tuple(tools)},
    )


def _cold() -> None:
    """Forget compiled contracts: ``Contract.of`` caches one per type for the process."""
    clear = getattr(Contract.of, "cache_clear", None)
    if clear is not None:
        clear()


@functools.cache
def serve(size: int, hooks: bool) -> SdkServer[Any]:
    """:func:`server` compiled and served on the SDK's low-level ``Server`` (once)."""
    container = Container()
    with collector(False):  # set-up only, not timed: spare the run the collector's share
        catalog = compile_server(server(size, hooks), container)
    return build_sdk_server(catalog, container)


def compile_seconds(
    declaration: type[Server], *, on: bool, clock: Callable[[], float] = time.process_time
) -> float:
    """A cold ``compile_server`` of ``declaration``, the collector ``on`` or off."""
    _cold()
    container = Container()
    gc.collect()
    with collector(on):
        started = clock()
        catalog = compile_server(declaration, container)
        seconds = clock() - started
    del catalog
    return seconds


def retained_bytes(declaration: type[Server]) -> tuple[int, int]:
    """What ``compile_server``, then ``build_sdk_server``, leave allocated."""
    _cold()
    container = Container()
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        catalog = compile_server(declaration, container)
        gc.collect()
        compiled = tracemalloc.get_traced_memory()[0] - start
        sdk = build_sdk_server(catalog, container)
        gc.collect()
        served = tracemalloc.get_traced_memory()[0] - start - compiled
    finally:
        tracemalloc.stop()
    del sdk, catalog
    return compiled, served
