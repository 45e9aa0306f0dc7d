"""``Timing``: every call's duration, handed to a callback or logged, the last few kept."""

from __future__ import annotations

import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Any

from mcp_adapter.declare.middleware import Call, Next, Stage, checked_stage

Key = tuple[str, str | None]
"""``(method, component)``: ``("tools/call", "add")``, ``("resources/read",
"notes://{id}")``, ``("tools/list", "")``; ``None`` for names the server does not know."""


class Timing:
    """Middleware that measures how long the rest of the chain takes, in milliseconds.

    Each duration goes to ``callback(call, duration_ms)`` when one is given (it runs on the
    call's path: keep it quick; if it raises, the error is logged and the call goes on),
    else to the logger ``mcp_adapter.timing`` at DEBUG. The last ``keep`` durations of
    each ``(method, component)`` stay readable through ``durations()`` (the pairs:
    ``timed()``): a resource is kept under its URI template, and every name the server
    does not know under ``None``, so the client cannot choose keys; at most ``max_keys``
    pairs are kept, the least recently timed dropped first.

    ``stage``: ``"request"`` (the default) times everything the adapter does for a request
    (hooks, validation, building the result), unknown, refused and invalid calls
    included; ``"call"`` times the rest of the chain around the handler. Failed and
    cancelled calls are timed too. It injects nothing, so it adds no request snapshot to
    a call.

    >>> timing = Timing(keep=2)
    >>> for ms in (1.0, 2.0, 3.0):
    ...     timing.record(Call("add"), ms)
    >>> timing.durations("tools/call", "add")
    (2.0, 3.0)
    """

    __slots__ = ("_kept", "callback", "keep", "logger", "max_keys", "stage")

    def __init__(
        self,
        callback: Callable[[Call, float], None] | None = None,
        *,
        keep: int = 100,
        max_keys: int = 1000,
        logger: logging.Logger | str = "mcp_adapter.timing",
        stage: Stage = "request",
    ) -> None:
        if keep < 1 or max_keys < 1:
            raise ValueError(
                f"Timing keeps at least one duration and one key: {keep=}, {max_keys=}"
            )
        self.stage = checked_stage(stage, "Timing")
        self.callback = callback
        self.keep = keep
        self.max_keys = max_keys
        self.logger = logger if isinstance(logger, logging.Logger) else logging.getLogger(logger)
        self._kept: OrderedDict[Key, deque[float]] = OrderedDict()

    async def __call__(self, call: Call, call_next: Next) -> Any:
        started = time.perf_counter()
        try:
            return await call_next(call)
        finally:
            self.record(call, (time.perf_counter() - started) * 1000)

    def record(self, call: Call, duration_ms: float) -> None:
        """Keep one duration of ``call`` and report it (what the layer does after each call)."""
        key = (call.method, call.component)
        kept = self._kept.get(key)
        if kept is None:
            kept = self._kept[key] = deque(maxlen=self.keep)
            if len(self._kept) > self.max_keys:
                self._kept.popitem(last=False)
        else:
            self._kept.move_to_end(key)
        kept.append(duration_ms)
        if self.callback is None:
            self.logger.debug("%s %r took %.2f ms", call.method, call.component, duration_ms)
            return
        try:
            self.callback(call, duration_ms)
        except Exception:
            self.logger.exception("Timing callback %r failed", self.callback)

    def durations(self, method: str, component: str | None = "") -> tuple[float, ...]:
        """The last durations (ms, oldest first) of calls of ``method`` on ``component`` (a
        resource's URI template; ``None``: names the server does not know)."""
        kept = self._kept.get((method, component))
        return () if kept is None else tuple(kept)

    def timed(self) -> list[Key]:
        """The ``(method, component)`` pairs with durations, least recently timed first."""
        return list(self._kept)

    def clear(self) -> None:
        """Forget every duration."""
        self._kept.clear()
