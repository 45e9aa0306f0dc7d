"""Stop signals held until the shutdown that follows uvicorn's ``serve()`` is done.

``uvicorn.Server.serve()`` turns SIGINT/SIGTERM into a graceful exit, then
re-raises the signal as it returns, so a SIGTERM kills the process there, by
its default action. When start-up and shutdown run around ``serve()``
(``serve_lifespan`` in ``mcp-adapter serve``), the shutdown comes after it
returns and would never run. :class:`HeldSignals` takes over from ``install()``
on: a signal asks the server to exit (as uvicorn's own handler does), the one
uvicorn re-raises is caught again, and on leaving the ``with`` block the old
handlers are back and the signals caught are re-raised, newest first, as
uvicorn would have.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType
from typing import Any, Protocol, Self

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _Stoppable(Protocol):
    def handle_exit(self, sig: int, frame: FrameType | None) -> None: ...


class HeldSignals:
    """Hold SIGINT/SIGTERM for ``server`` from ``install()`` to the end of the ``with`` block."""

    def __init__(self, server: _Stoppable) -> None:
        self._server = server
        self._previous: dict[int, Any] = {}
        self.caught: list[int] = []

    def install(self) -> None:
        """Start holding (only the main thread can; elsewhere signals stay as they are)."""
        if threading.current_thread() is not threading.main_thread() or self._previous:
            return
        self._previous = {sig: signal.signal(sig, self._handle) for sig in STOP_SIGNALS}

    def _handle(self, sig: int, frame: FrameType | None) -> None:
        if sig not in self.caught:
            self.caught.append(sig)
        self._server.handle_exit(sig, frame)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}
        for sig in reversed(self.caught):
            signal.raise_signal(sig)
