"""Where a served catalog's tasks live and who runs them, as the command line deploys it:
``--redis`` puts tasks that ``Server.tasks`` leaves at ``memory://`` in that Redis (one
setting for everything replicas share), and ``serve --enqueue-only`` runs no worker in
the serving process (``mcp-adapter worker`` processes run the bodies)."""

from __future__ import annotations

import dataclasses

from mcp_adapter.cli.errors import CliError
from mcp_adapter.compiled.catalog import Catalog

MEMORY = "memory://"


def deployed_tasks(
    catalog: Catalog, redis_url: str | None, *, worker: bool = True, flag: str = "--enqueue-only"
) -> Catalog:
    """``catalog`` with its tasks on ``redis_url`` (unless ``Server.tasks`` names a Redis
    of its own) and run here only when ``worker``; unchanged without task tools."""
    tasks = catalog.tasks
    if tasks is None:
        return catalog
    url = tasks.url
    if url.startswith(MEMORY) and redis_url is not None:
        url = redis_url
    if not worker and url.startswith(MEMORY):
        raise CliError(
            f"{flag} leaves the tasks to `mcp-adapter worker` processes, which "
            "memory:// tasks cannot reach",
            "add --redis redis://HOST:PORT/DB (the same for serve and worker)",
        )
    if url == tasks.url and worker == tasks.worker:
        return catalog
    return dataclasses.replace(catalog, tasks=dataclasses.replace(tasks, url=url, worker=worker))
