"""Stop signals held until the shutdown that follows serving is done, and that shutdown bounded.

``uvicorn.Server.serve()`` turns SIGINT/SIGTERM into a graceful exit, then
re-raises the signal as it returns, so a SIGTERM kills the process there, by
its default action; over stdio nothing handled SIGTERM at all. When start-up and
shutdown run around serving (``serve_lifespan`` in ``mcp-adapter serve``), the
shutdown comes after serving returns and would never run. :class:`HeldSignals`
takes over from ``install()`` on: a first signal asks serving to stop (the
``stop`` given: uvicorn's own exit, or cancelling stdio), the one uvicorn re-raises
is caught again, and on leaving the ``with`` block the old handlers are back and
the signals caught are re-raised, newest first, as uvicorn would have.

A shutdown must end. From :meth:`HeldSignals.shutting_down` on (serving is over:
sessions, the server's lifespan and the container's singletons are being closed),
and from a first signal when :meth:`HeldSignals.bound_stop` asked for it (stdio:
cancelling the calls in flight), the process exits at once when ``timeout`` seconds
pass or another stop signal comes, saying so on stderr: a hanging finalizer, even
one that blocks the event loop, cannot keep it alive.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, Self

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
FORCED_EXIT = 1
"""The exit status of a shutdown that did not finish (its time ran out)."""


class HeldSignals:
    """Hold SIGINT/SIGTERM from ``install()`` to the end of the ``with`` block; bound the
    shutdown to ``timeout`` seconds (``None``: unbounded, but a further signal still ends it)."""

    def __init__(self, timeout: float | None = None) -> None:
        self.timeout = timeout
        self._stop: Callable[[int], None] | None = None
        self._previous: dict[int, Any] = {}
        self._clock: threading.Timer | None = None
        self._stopping = False
        self._bound_stop = False
        self.caught: list[int] = []

    def install(self, stop: Callable[[int], None]) -> None:
        """Start holding: a first signal calls ``stop(signal)``, in the signal handler (only
        the main thread can hold signals; elsewhere they stay as they are)."""
        self._stop = stop
        if threading.current_thread() is not threading.main_thread() or self._previous:
            return
        self._previous = {sig: signal.signal(sig, self._handle) for sig in STOP_SIGNALS}

    def bound_stop(self) -> None:
        """Bound stopping too: from the first signal, ``timeout`` runs and a further
        signal ends the process (for a ``stop`` that has no bound of its own)."""
        self._bound_stop = True

    def shutting_down(self) -> None:
        """Serving is over: from now on the shutdown has ``timeout`` seconds, and a stop
        signal ends the process at once."""
        self._stopping = True
        self._start_clock()

    def _handle(self, sig: int, frame: FrameType | None) -> None:
        if self._stopping:
            self._force(f"signal {signal.Signals(sig).name} during shutdown")
        if sig not in self.caught:
            self.caught.append(sig)
        if self._bound_stop:
            self._stopping = True
            self._start_clock()
        if self._stop is not None:
            self._stop(sig)

    def _start_clock(self) -> None:
        if self._clock is not None:
            self._clock.cancel()
        if self.timeout is None:
            return
        self._clock = threading.Timer(self.timeout, self._expired)
        self._clock.daemon = True
        self._clock.start()

    def _expired(self) -> None:
        self._force(f"shutdown did not finish within {self.timeout:g} s (--shutdown-timeout)")

    @staticmethod
    def _force(why: str) -> None:
        """End the process now (from a signal handler or the clock's thread)."""
        try:
            sys.stderr.write(f"mcp-adapter: exiting before the shutdown finished: {why}\n")
            sys.stderr.flush()
        finally:
            os._exit(FORCED_EXIT)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._clock is not None:
            self._clock.cancel()
            self._clock = None
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}
        for sig in reversed(self.caught):
            signal.raise_signal(sig)
