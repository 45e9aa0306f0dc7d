"""Reaching the event loop a request is served on, from any thread.

The services a handler gets (``Notifier``, ``Progress``, ``ClientLogger``) send
through the SDK, which lives on the event loop. A sync handler runs in a worker
thread; its code may start threads of its own. :func:`reach` lets each service
offer one method for both: awaited on the loop, a plain call anywhere else.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Generator
from functools import partial
from typing import Any

import anyio.from_thread
import anyio.to_thread
from anyio.lowlevel import EventLoopToken, current_token


class _Done:
    """An awaitable that is already complete: what a call made off the loop returns."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield  # a generator: awaiting it completes at once

    def __repr__(self) -> str:
        return "<done>"


DONE: Awaitable[None] = _Done()
"""Returned by a call that has already done its work (off the loop, or with nothing to do)."""


def running_loop() -> EventLoopToken | None:
    """The token of the event loop running on this thread, ``None`` on any other thread."""
    try:
        return current_token()
    except RuntimeError:  # anyio's NoEventLoopError: no loop runs on this thread
        return None


def loop_token() -> EventLoopToken | None:
    """The loop to reach from here: this thread's, or the one an anyio worker thread serves.

    ``None`` on a thread that is neither (a thread a handler started itself).
    Called where a service is made, which is always one of the first two.
    """
    here = running_loop()
    if here is not None:
        return here
    try:
        return anyio.from_thread.run_sync(current_token)
    except RuntimeError:  # not an anyio worker thread
        return None


def reach(
    token: EventLoopToken | None,
    send: Callable[..., Coroutine[Any, Any, None]],
    *args: Any,
) -> Awaitable[None]:
    """``send(*args)``, on the loop of ``token``, from whatever thread calls.

    On that loop: the coroutine, for the caller to await. On another thread: run
    to completion on that loop before returning (a worker thread blocks, as a
    sync handler expects), and the returned awaitable is already done. On
    another loop: a coroutine that hops through a worker thread of this one.
    """
    here = running_loop()
    if here is not None:
        if token is None or here == token:
            return send(*args)
        hop = partial(anyio.from_thread.run, send, *args, token=token)
        return anyio.to_thread.run_sync(hop)
    if token is None:
        anyio.from_thread.run(send, *args)  # an anyio worker thread knows its loop
    else:
        anyio.from_thread.run(send, *args, token=token)
    return DONE
