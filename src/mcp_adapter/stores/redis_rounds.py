"""A :class:`~mcp_adapter.stores.rounds.RoundLedger` in Redis: a round answered on one
replica is refused on every other.

One key per answered round, ``{prefix}:{key}`` (``key`` is a digest of the round's id,
never a client's string), set with ``SET ... NX PX``: atomic however many replicas
take the same state at once, and gone when the state could no longer be opened.

Redis replicates asynchronously, so a record only the primary holds is lost when a
replica takes its place (a forced failover, a partition: the old primary takes writes
until the Sentinels demote it). With ``wait_replicas`` the ``SET`` is followed, on the
same connection, by ``WAIT wait_replicas``: a round is taken only once that many
replicas hold its record; fewer, and the record is taken back and the round refused,
as when Redis does not answer.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING

import anyio

from mcp_adapter.distribution import needs_extra
from mcp_adapter.stores.rounds import LedgerUnavailable

if TYPE_CHECKING:
    from redis.asyncio import Redis

logger = logging.getLogger(__name__)

DEFAULT_WAIT_TIMEOUT = 1.0
"""Seconds ``WAIT`` waits for the replicas a round's record must reach."""


def check_wait(wait_replicas: int, wait_timeout: float) -> None:
    """A ValueError unless ``wait_replicas`` is a count (0 or more) and ``wait_timeout``
    a positive number of seconds (``WAIT ... 0`` would wait for ever).

    >>> check_wait(-1, 1.0)
    Traceback (most recent call last):
    ...
    ValueError: wait_replicas is how many replicas must hold an answered round (0 or more), not -1
    """
    if isinstance(wait_replicas, bool) or not isinstance(wait_replicas, int) or wait_replicas < 0:
        raise ValueError(
            "wait_replicas is how many replicas must hold an answered round "
            f"(0 or more), not {wait_replicas!r}"
        )
    if isinstance(wait_timeout, bool) or not 0 < wait_timeout < math.inf:
        raise ValueError(
            f"wait_timeout is the seconds WAIT waits for replicas (more than 0), "
            f"not {wait_timeout!r}"
        )


class RedisRounds:
    """Records answered rounds in Redis, so N replicas refuse one replay.

    ``client`` is a ``redis.asyncio.Redis``; ``prefix`` namespaces the keys. A command
    that fails, or takes longer than ``timeout`` seconds (``None``: the client's own
    timeouts bound it; ``SharedRedis.rounds()`` gives its command timeout) and
    ``wait_timeout``, is :class:`~mcp_adapter.stores.rounds.LedgerUnavailable`: the
    retry is refused, not let through unrecorded. So is a record fewer than
    ``wait_replicas`` replicas confirm within ``wait_timeout`` seconds (0: the
    primary's word is enough); ``wait_timeout`` should stay below the client's own
    socket timeout.
    """

    def __init__(
        self,
        client: Redis,
        prefix: str = "mcp_adapter:rounds",
        timeout: float | None = None,
        *,
        wait_replicas: int = 0,
        wait_timeout: float = DEFAULT_WAIT_TIMEOUT,
    ) -> None:
        check_wait(wait_replicas, wait_timeout)
        self.client = client
        self.prefix = prefix
        self.timeout = timeout
        self.wait_replicas = wait_replicas
        self.wait_timeout = wait_timeout

    async def consume(self, key: str, ttl: float) -> bool:
        with needs_extra("redis", "the Redis record of answered rounds"):
            from redis.exceptions import RedisError

        name = f"{self.prefix}:{key}"
        millis = max(1, math.ceil(ttl * 1000))
        bound = self.timeout
        if bound is not None and self.wait_replicas:
            bound += self.wait_timeout
        try:
            with anyio.fail_after(bound):
                if not self.wait_replicas:
                    return bool(await self.client.set(name, b"1", nx=True, px=millis))
                pipe = self.client.pipeline(transaction=False)  # one connection: WAIT
                pipe.set(name, b"1", nx=True, px=millis)  # counts this one's writes
                pipe.wait(self.wait_replicas, max(1, math.ceil(self.wait_timeout * 1000)))
                done, confirmed = await pipe.execute()
        except (RedisError, OSError, TimeoutError) as exc:
            raise LedgerUnavailable(f"Redis did not record the round: {exc}") from exc
        if not done:
            return False
        if confirmed < self.wait_replicas:
            await self._forget(name)
            raise LedgerUnavailable(
                f"Redis did not confirm the round on {self.wait_replicas} "
                f"replica{'s' if self.wait_replicas > 1 else ''} within "
                f"{self.wait_timeout:g} s (only {confirmed}): the record is taken back"
            )
        return True

    async def _forget(self, name: str) -> None:
        """Take back a record the replicas did not confirm (best effort: left there, it
        refuses the round's retry until it expires, or vanishes with a demoted primary)."""
        with needs_extra("redis", "the Redis record of answered rounds"):
            from redis.exceptions import RedisError

        try:
            with anyio.fail_after(self.timeout):
                await self.client.delete(name)
        except (RedisError, OSError, TimeoutError) as exc:
            logger.warning("an unconfirmed round's record stays in Redis until it expires: %s", exc)
