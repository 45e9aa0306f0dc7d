"""Task tools checked when a server compiles: their ``task_support``, the server's
``Tasks`` settings, that Docket is installed, and that nothing a task body needs
dies with the request that started it (docs/tasks.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from container import Problem
from mcp_adapter.compiled.catalog import CompiledTool
from mcp_adapter.declare.tasks import TASK_SUPPORT, Tasks
from mcp_adapter.distribution import MissingExtra, install_hint, needs_extra
from mcp_adapter.errors import problem
from mcp_adapter.tasks.wire import EXTENSION

URL_SCHEMES = (
    "memory://",
    "redis://",
    "rediss://",
    "redis+sentinel://",
    "rediss+sentinel://",
    "unix://",
)


def task_support_of(value: Any, where: str, problems: list[Problem]) -> str:
    """``value`` when it is one of the extension's three words, else a problem."""
    if isinstance(value, str) and value in TASK_SUPPORT:
        return value
    problems.append(
        problem(
            (where,),
            f"task_support must be one of {', '.join(map(repr, TASK_SUPPORT))}, not {value!r}",
        )
    )
    return "forbidden"


def docket_installed() -> bool:
    try:
        with needs_extra("tasks", "task tools"):
            import docket  # noqa: F401 - only whether it imports
    except MissingExtra:
        return False
    return True


def _settings(tasks: Any, where: str, problems: list[Problem]) -> Tasks | None:
    if not isinstance(tasks, Tasks):
        problems.append(problem((where,), f"tasks must be a Tasks(...), not {tasks!r}"))
        return None
    found: list[str] = []
    for name in (
        "ttl",
        "max_ttl",
        "poll_interval",
        "shutdown_grace",
        "redelivery_timeout",
        "store_timeout",
    ):
        value = getattr(tasks, name)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            found.append(f"{name} must be a positive number of seconds, not {value!r}")
    for name in ("max_running", "max_running_per_identity"):
        value = getattr(tasks, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            found.append(f"{name} must be a whole number, at least 1, not {value!r}")
    if not found and tasks.ttl > tasks.max_ttl:
        found.append(f"ttl ({tasks.ttl:g} s) is longer than max_ttl ({tasks.max_ttl:g} s)")
    if tasks.on_shutdown not in ("cancel", "drain"):
        found.append(f"on_shutdown must be 'cancel' or 'drain', not {tasks.on_shutdown!r}")
    if not isinstance(tasks.url, str) or not tasks.url.startswith(URL_SCHEMES):
        found.append(f"url must be memory:// or a Redis URL, not {tasks.url!r}")
    elif not tasks.worker and tasks.url.startswith("memory://"):
        found.append(
            "worker=False leaves the tasks to worker processes, which a memory:// url "
            "cannot reach: give a Redis url"
        )
    if tasks.name is not None and (not isinstance(tasks.name, str) or not tasks.name.strip()):
        found.append(f"name must be a non-empty string, not {tasks.name!r}")
    problems.extend(problem((where,), message) for message in found)
    return None if found else tasks


def compile_tasks(
    tools: Sequence[CompiledTool], tasks: Any, where: str, problems: list[Problem]
) -> Tasks | None:
    """The server's ``Tasks`` when some tool may run as a task, else ``None``."""
    capable = [tool for tool in tools if tool.task_support != "forbidden"]
    if not capable:
        return None
    if not docket_installed():
        names = ", ".join(repr(tool.name) for tool in capable)
        problems.append(
            problem(
                (where,),
                f"the tools {names} may run as tasks, which run on Docket (pydocket), "
                "and it is not installed",
                install_hint("tasks"),
            )
        )
    for tool in capable:
        if tool.needs_http:
            problems.append(
                problem(
                    (f"tool {tool.name!r}", tool.cls.__qualname__, "HTTP Request"),
                    f"tool {tool.name!r} may run as a task, but it (its handler, a hook or "
                    "a service) needs the HTTP request, which ends before the task does",
                    "take what the task needs from McpRequest (identity, arguments, meta) "
                    "or a service, or declare task_support='forbidden'",
                )
            )
    return _settings(tasks, where, problems)


TASK_METHODS = ("tasks/get", "tasks/update", "tasks/cancel")


def protocol_extensions(server: Any, where: str, problems: list[Problem]) -> tuple[Any, ...]:
    """``Server.protocol_extensions``, checked: SDK ``Extension`` instances with distinct
    identifiers, contributing settings and methods only, none of them the tasks
    extension's own."""
    from mcp.server.extension import Extension

    found: list[Any] = []
    seen: set[str] = set()
    methods: set[str] = set(TASK_METHODS)
    for index, extension in enumerate(server.protocol_extensions):
        at = f"{where}[{index}]"
        if not isinstance(extension, Extension):
            problems.append(
                problem((at,), f"{extension!r} is not an mcp.server.extension.Extension")
            )
            continue
        identifier = str(getattr(extension, "identifier", ""))
        if identifier == EXTENSION or identifier in seen:
            problems.append(problem((at,), f"the extension {identifier!r} is served already"))
            continue
        seen.add(identifier)
        if extension.tools() or extension.resources():
            problems.append(
                problem(
                    (at,),
                    f"the extension {identifier!r} contributes tools or resources",
                    "declare them as Tool/Resource classes or an McpExtension's ToolSpec",
                )
            )
        if type(extension).intercept_tool_call is not Extension.intercept_tool_call:
            problems.append(
                problem(
                    (at,),
                    f"the extension {identifier!r} intercepts tools/call",
                    "wrap calls with Server.middleware instead (docs/middleware.md)",
                )
            )
        for binding in extension.methods():
            if binding.method in methods:
                problems.append(problem((at,), f"the method {binding.method!r} is served already"))
            methods.add(binding.method)
        found.append(extension)
    return tuple(found)
