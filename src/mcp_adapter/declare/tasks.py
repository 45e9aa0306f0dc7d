"""Declaring long-running tools as tasks: a tool's ``task_support`` and the server's
``Tasks`` settings (docs/tasks.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

TaskSupport = Literal["forbidden", "optional", "required"]
"""Whether a tool may run as a task (the tasks extension's ``execution.taskSupport``):
``"forbidden"`` (the default) never, ``"optional"`` when the client negotiated the
extension (inline otherwise), ``"required"`` only as a task (a client without the
extension gets ``-32021``)."""

TASK_SUPPORT: tuple[str, ...] = get_args(TaskSupport)

Shutdown = Literal["cancel", "drain"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Tasks:
    """How a server runs its task tools (``Server.tasks``); read when it compiles.

    >>> Tasks().url
    'memory://'
    """

    url: str = "memory://"
    """Where Docket keeps the tasks: ``memory://`` (in the serving process, the default)
    or a ``redis://`` URL that several processes share."""
    ttl: float = 3600.0
    """Seconds a task (and its result) stays readable after it was created."""
    max_ttl: float = 86400.0
    """The longest ``ttl`` a server may declare."""
    poll_interval: float = 1.0
    """Seconds a client is told to wait between two ``tasks/get``."""
    max_running: int = 100
    """Tasks of this process not ended yet, in all; one more is refused."""
    max_running_per_identity: int = 10
    """Tasks of one identity not ended yet; one more is refused."""
    on_shutdown: Shutdown = "cancel"
    """At shutdown: ``"cancel"`` the running bodies, or ``"drain"``: wait for them up
    to ``shutdown_grace`` seconds, then cancel."""
    shutdown_grace: float = 30.0
    redelivery_timeout: float = 60.0
    """Seconds after which a task whose worker stopped answering is taken by another
    worker (``redis://``), which ends it ``failed``."""
    store_timeout: float = 5.0
    """Seconds one request (``tools/call`` starting a task, ``tasks/get``, ``tasks/update``,
    ``tasks/cancel``) may wait on the task store in all; past it, or when the store
    fails, the request answers ``-32603`` saying the task store did not answer."""
    name: str | None = None
    """Docket's name, the start of every key it keeps (default ``mcp-adapter:{server
    name}``); ``mcp-adapter serve --redis`` puts tasks it holds under
    ``{--redis-prefix}:{server name}:tasks``, beside the deployment's other keys."""
    worker: bool = True
    """Whether the serving process runs a Docket worker for its tasks. ``False``: it only
    enqueues them, for ``mcp-adapter worker`` processes sharing its Redis ``url`` to run
    (``mcp-adapter serve --enqueue-only``); it needs a Redis ``url``."""
