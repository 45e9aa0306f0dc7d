"""Which ``BaseException`` leaving a handler must stop the request, and which is a failure.

A handler, hook, service factory or finalizer that raises ``SystemExit``,
``KeyboardInterrupt`` or ``GeneratorExit`` must not stop the server: like any
other failure, it becomes an incident answer. A ``CancelledError`` is real
cancellation (the client's ``notifications/cancelled``, a disconnect, shutdown)
only when the request's task is being cancelled: ``Task.cancelling()`` counts the
cancellations requested of it, and anyio's cancel scopes request theirs that way
too. A ``CancelledError`` the handler raised itself, while nobody cancelled its
task (a sync handler raising it in its worker thread, too), is a failure like
the others.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from mcp_adapter.errors import McpAdapterError


def _task_is_cancelled() -> bool:
    try:
        task = asyncio.current_task()
    except RuntimeError:  # not asyncio (trio): it cannot tell, so every one is taken as real
        return True
    return task is None or task.cancelling() > 0


def cancelled_for_real(error: BaseException) -> bool:
    """Whether ``error`` must propagate: the request's task is being cancelled.

    Called with a ``BaseException`` that is not an ``Exception``. While a real
    cancellation is pending anything propagates (the cancellation would be
    delivered again at the next ``await`` anyway); otherwise it is a failure.
    """
    del error  # what was raised does not decide; whether the task is being cancelled does
    return _task_is_cancelled()


class HandlerExited(McpAdapterError, RuntimeError):
    """A sync handler raised ``GeneratorExit`` in its worker thread (the cause).

    Delivered through a future, ``GeneratorExit`` would be thrown into the
    request's coroutine chain, which closes every inner frame and raises it at
    the outermost one, the SDK's: past the adapter's error handling. As this
    ordinary exception it reaches the dispatcher, which answers with an incident.
    """


def in_thread(function: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """Call ``function(**kwargs)`` (in a worker thread); ``GeneratorExit`` becomes
    ``HandlerExited``."""
    try:
        return function(**kwargs)
    except GeneratorExit as exc:
        raise HandlerExited(f"{function!r} raised GeneratorExit") from exc
