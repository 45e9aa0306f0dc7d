"""Where a served catalog's tasks live and who runs them, as the command line deploys it:
``--redis`` puts tasks that ``Server.tasks`` leaves at ``memory://`` in that Redis (one
setting for everything replicas share), and ``serve --enqueue-only`` runs no worker in
the serving process (``mcp-adapter worker`` processes run the bodies). Tasks that would
stay in one process's memory are refused where other processes must reach them
(``--enqueue-only``, ``--workers N``)."""

from __future__ import annotations

import dataclasses

from mcp_adapter.cli.errors import CliError
from mcp_adapter.compiled.catalog import Catalog

MEMORY = "memory://"


def deployed_tasks(
    catalog: Catalog,
    redis_url: str | None,
    prefix: str | None = None,
    *,
    worker: bool = True,
    flag: str = "--enqueue-only",
    processes: int = 1,
) -> Catalog:
    """``catalog`` with its tasks on ``redis_url``, under ``{prefix}:{server}:tasks``
    (unless ``Server.tasks`` names a Redis of its own), and run here only when
    ``worker``; unchanged without task tools. ``processes``: how many serving processes
    share the tasks (``--workers``): more than one needs them in Redis."""
    tasks = catalog.tasks
    if tasks is None:
        return catalog
    url, name = tasks.url, tasks.name
    if url.startswith(MEMORY) and redis_url is not None:
        from mcp_adapter.stores.shared import DEFAULT_PREFIX

        url = redis_url
        name = name or f"{prefix or DEFAULT_PREFIX}:{catalog.name}:tasks"
    if not worker and url.startswith(MEMORY):
        raise CliError(
            f"{flag} leaves the tasks to `mcp-adapter worker` processes, which "
            "memory:// tasks cannot reach",
            "add --redis redis://HOST:PORT/DB (the same for serve and worker)",
        )
    if processes > 1 and url.startswith(MEMORY):
        raise CliError(
            f"--workers {processes} serves from {processes} processes, and memory:// tasks "
            "live in the one that started them: the others would answer that they do not "
            "exist",
            "add --redis redis://HOST:PORT/DB (every worker then shares the tasks), "
            "or serve with --workers 1",
        )
    if (url, name, worker) == (tasks.url, tasks.name, tasks.worker):
        return catalog
    deployed = dataclasses.replace(tasks, url=url, name=name, worker=worker)
    return dataclasses.replace(catalog, tasks=deployed)
