"""``Server.lifespan``: checked once by the compiler (``compiled.lifespan`` enters it).

The method is an async generator (``async def lifespan(self, db: Db): ...; yield; ...``)
or returns an async context manager (``@asynccontextmanager``). ``self`` is an
instance of the server class built by the container, as a tool's ``self`` is;
every other parameter is a service. It runs once per serving process, outside
any session or request, so what it takes must live in the container itself
(singletons, or transients made of them); ``McpRequest`` and the HTTP request
have no value there.
"""

from __future__ import annotations

import inspect
from typing import Any

from container import Container, Problem, type_name
from mcp_adapter.compile.handlers import app_level, plan_handler
from mcp_adapter.compiled.handlers import Source
from mcp_adapter.compiled.lifespan import LIFESPAN, CompiledLifespan
from mcp_adapter.errors import problem

_WHY = "the lifespan runs outside any session or request"


def compile_lifespan(
    server: type, container: Container, problems: list[Problem]
) -> CompiledLifespan | None:
    """The compiled ``server.lifespan`` (``None`` without one), appending what is wrong."""
    function = getattr(server, LIFESPAN, None)
    if function is None:
        return None
    label = f"{server.__qualname__}.{LIFESPAN}"
    before = len(problems)
    if not callable(function):
        problems.append(problem((label,), f"{label} is not callable"))
        return None
    generator = inspect.isasyncgenfunction(function)
    unwrapped = inspect.unwrap(function)
    if not generator and inspect.iscoroutinefunction(unwrapped):
        problems.append(
            problem(
                (label,),
                f"{label} is an async def that does not yield",
                "yield once where the server runs, or decorate it with @asynccontextmanager",
            )
        )
    elif inspect.isgeneratorfunction(unwrapped):
        problems.append(
            problem(
                (label,),
                f"{label} is a sync generator",
                "make it `async def lifespan(self, ...) -> AsyncIterator[None]` with one yield",
            )
        )
    plan, found = plan_handler(server, LIFESPAN, container)
    problems.extend(found)
    services: list[tuple[str, Any]] = []
    for slot in plan.slots if plan is not None else ():
        here = (f"{label}({slot.name})",)
        if slot.source in (Source.REQUEST, Source.HTTP_REQUEST):
            problems.append(
                problem(
                    here,
                    f"parameter {slot.name}: {type_name(slot.key)} of {label} has no value: "
                    "the lifespan runs once at serve start, outside any request",
                    "take the services it needs; read requests in handlers",
                )
            )
        elif slot.source is Source.SERVICE:
            app_level(slot.key, container, here, problems, why=_WHY)
            services.append((slot.name, slot.key))
    app_level(server, container, (f"{label}(self)",), problems, why=_WHY)
    if len(problems) > before:
        return None
    return CompiledLifespan(server=server, services=tuple(services), generator=generator)
