"""The places of the tasks one process started and that have not ended: counted against
``Tasks.max_running`` in all and ``Tasks.max_running_per_identity`` per owner."""

from __future__ import annotations

from collections.abc import Iterator

from mcp_adapter.tasks.wire import too_many


class Places:
    """Which tasks hold a place, by owner; one more than a cap allows is refused."""

    __slots__ = ("_count", "_running", "max_running", "per_identity")

    def __init__(self, max_running: int, per_identity: int) -> None:
        self.max_running = max_running
        self.per_identity = per_identity
        self._running: dict[str, set[str]] = {}
        self._count = 0

    def full(self, owner: str) -> bool:
        """Whether one more task of ``owner`` would pass a cap."""
        mine = self._running.get(owner, ())
        return self._count >= self.max_running or len(mine) >= self.per_identity

    def admit(self, owner: str, key: str) -> None:
        """Count ``key`` against the caps, or refuse it (``-32004`` naming the cap)."""
        if self._count >= self.max_running:
            raise too_many("max_running", self.max_running)
        mine = self._running.setdefault(owner, set())
        if len(mine) >= self.per_identity:
            raise too_many("max_running_per_identity", self.per_identity)
        mine.add(key)
        self._count += 1

    def release(self, owner: str, key: str) -> None:
        """Give back the place of ``key`` (a no-op for a task that holds none here)."""
        mine = self._running.get(owner)
        if mine is None or key not in mine:
            return
        mine.discard(key)
        if not mine:
            del self._running[owner]
        self._count -= 1

    def held(self) -> Iterator[tuple[str, str]]:
        """``(owner, key)`` of every task holding a place (a copy: release as you go)."""
        for owner, keys in list(self._running.items()):
            for key in list(keys):
                yield owner, key
