"""``SharedRedis``: the one Redis that replicas of a server share, and the stores on it.

``http_app(..., redis=...)`` and ``serve_stdio(..., redis=...)`` take a URL
(``redis://host:port/db``, ``rediss://`` for TLS, ``unix://``, ``redis+sentinel://``
for a primary that Redis Sentinel names: :mod:`mcp_adapter.stores.sentinel_url`), a
``redis.asyncio.Redis`` client, or a :class:`SharedRedis` (to choose the prefix).
Every key and channel the adapter writes starts with the prefix and the served
server's name (``mcp_adapter:<server>:...``), then names its owner (session,
stream, caller).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_adapter.distribution import needs_extra
from mcp_adapter.stores.events import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_BYTES_PER_STREAM,
    DEFAULT_MAX_EVENTS_PER_STREAM,
)
from mcp_adapter.stores.redis_events import DEFAULT_EVENT_TTL, RedisEventLog
from mcp_adapter.stores.redis_rounds import DEFAULT_WAIT_TIMEOUT, check_wait
from mcp_adapter.stores.sentinel_url import is_sentinel_url, parse_sentinel_url, split_netloc

if TYPE_CHECKING:
    from collections.abc import Callable

    from redis.asyncio import Redis

    from container import SessionScope
    from mcp_adapter.stores.handles import HandleLimits
    from mcp_adapter.stores.redis_bus import RedisSubscriptionBus
    from mcp_adapter.stores.redis_handles import RedisHandles
    from mcp_adapter.stores.redis_rates import RedisRateStore
    from mcp_adapter.stores.redis_rounds import RedisRounds

SECRET_OPTION = re.compile(r"([?&](?:sentinel_)?password=)[^&#]*")

DEFAULT_PREFIX = "mcp_adapter"
SCHEMES = ("redis", "rediss", "unix", "redis+sentinel", "rediss+sentinel")
CONNECT_TIMEOUT = 2.0
"""Seconds to connect to Redis before a command fails (readiness answers within it)."""
COMMAND_TIMEOUT = 5.0
"""Seconds a Redis command may take before it fails."""


def redacted(url: str) -> str:
    """``url`` without its password, to print.

    >>> redacted("redis://user:secret@cache:6379/0")
    'redis://user:***@cache:6379/0'
    >>> redacted("redis://127.0.0.1:6379/0")
    'redis://127.0.0.1:6379/0'
    >>> redacted("redis+sentinel://:secret@s1:26379,[::1]:26379/mymaster?sentinel_password=x")
    'redis+sentinel://:***@s1:26379,[::1]:26379/mymaster?sentinel_password=***'
    """
    scheme, netloc, rest = split_netloc(url)
    userinfo, at, hosts = netloc.rpartition("@")
    user, colon, _ = userinfo.partition(":")
    if colon:
        netloc = f"{user}:***{at}{hosts}"
    return scheme + netloc + SECRET_OPTION.sub(r"\1***", rest)


def check_url(url: str) -> str:
    """``url`` if it is a Redis URL, else a ValueError saying what one looks like.

    >>> check_url("http://cache:6379")
    Traceback (most recent call last):
    ...
    ValueError: a Redis URL starts with redis://, rediss://, unix:// or redis+sentinel://, not 'http://cache:6379'

    A ``redis+sentinel://`` URL is read whole (its hosts, service, database, options).
    """
    scheme = url.partition("://")[0] if "://" in url else ""
    if scheme not in SCHEMES:
        raise ValueError(
            "a Redis URL starts with redis://, rediss://, unix:// or redis+sentinel://, "
            f"not {redacted(url)!r}"
        )
    if is_sentinel_url(url):
        parse_sentinel_url(url)
    return url


def client_from_url(url: str) -> Redis:
    """A ``redis.asyncio.Redis`` for ``url`` (nothing connects until the first command);
    for a ``redis+sentinel://`` URL, one on the primary its Sentinels name, followed
    through failovers."""
    with needs_extra("redis", "Redis support"):
        from redis.asyncio import Redis
    defaults: dict[str, Any] = {
        "socket_connect_timeout": CONNECT_TIMEOUT,
        "socket_timeout": COMMAND_TIMEOUT,
        "health_check_interval": 30,
    }
    if is_sentinel_url(check_url(url)):
        from mcp_adapter.stores.redis_sentinel import sentinel_client

        return sentinel_client(url, **defaults)
    client: Redis = Redis.from_url(url, **defaults)
    return client


@dataclass(frozen=True, slots=True)
class SharedRedis:
    """A Redis client and the prefix of every key the adapter keeps there."""

    client: Redis
    prefix: str = DEFAULT_PREFIX
    """The start of every key and channel; replicas of one server must share it, and
    another deployment on the same Redis must have its own."""
    owns_client: bool = False
    """The client was made here (from a URL): closed when serving ends."""
    wait_replicas: int = 0
    """How many replicas must hold a record the adapter promises to keep (an answered
    input round) before it is acknowledged; 0: the primary's word is enough."""
    wait_timeout: float = DEFAULT_WAIT_TIMEOUT
    """Seconds ``WAIT`` waits for those replicas before the round is refused."""

    def __post_init__(self) -> None:
        if not self.prefix or any(c.isspace() for c in self.prefix):
            raise ValueError(f"a Redis prefix is a word without spaces, not {self.prefix!r}")
        check_wait(self.wait_replicas, self.wait_timeout)

    @classmethod
    def of(cls, value: str | Redis | SharedRedis) -> SharedRedis:
        """``value`` as a :class:`SharedRedis`: a URL gets a client of its own."""
        if isinstance(value, SharedRedis):
            return value
        if isinstance(value, str):
            return cls(client_from_url(value), owns_client=True)
        return cls(value)

    def for_server(self, name: str) -> SharedRedis:
        """The same Redis under ``{prefix}:{name}``: what one served server writes."""
        return dataclasses.replace(self, prefix=f"{self.prefix}:{name}")

    def key(self, *parts: str) -> str:
        """``prefix:part:...``.

        >>> SharedRedis(client=None, prefix="app").key("rate", "ada")  # type: ignore[arg-type]
        'app:rate:ada'
        """
        return ":".join((self.prefix, *parts))

    async def reachable(self) -> bool:
        """Redis answers ``PING`` (within the client's timeouts)."""
        with needs_extra("redis", "Redis support"):
            from redis.exceptions import RedisError

        try:
            return bool(await self.client.ping())
        except (RedisError, OSError):
            return False

    async def aclose(self) -> None:
        """Close the client if it was made here (from a URL)."""
        if self.owns_client:
            await self.client.aclose()

    def event_log(
        self,
        *,
        max_events_per_stream: int = DEFAULT_MAX_EVENTS_PER_STREAM,
        max_bytes_per_stream: int = DEFAULT_MAX_BYTES_PER_STREAM,
        max_bytes: int = DEFAULT_MAX_BYTES,
        ttl: int = DEFAULT_EVENT_TTL,
    ) -> RedisEventLog:
        """A :class:`RedisEventLog` under ``{prefix}:events``."""
        return RedisEventLog(
            self.client,
            self.key("events"),
            max_events_per_stream=max_events_per_stream,
            max_bytes_per_stream=max_bytes_per_stream,
            max_bytes=max_bytes,
            ttl=ttl,
        )

    def subscription_bus(self) -> RedisSubscriptionBus:
        """A :class:`RedisSubscriptionBus` on channel ``{prefix}:changes``."""
        from mcp_adapter.stores.redis_bus import RedisSubscriptionBus

        return RedisSubscriptionBus(self.client, self.key("changes"))

    def rate_store(self) -> RedisRateStore:
        """A :class:`RedisRateStore` under ``{prefix}:rates``."""
        from mcp_adapter.stores.redis_rates import RedisRateStore

        return RedisRateStore(self.client, self.key("rates"))

    def rounds(self) -> RedisRounds:
        """A :class:`RedisRounds` under ``{prefix}:rounds``: answered input rounds."""
        from mcp_adapter.stores.redis_rounds import RedisRounds

        return RedisRounds(
            self.client,
            self.key("rounds"),
            timeout=COMMAND_TIMEOUT,
            wait_replicas=self.wait_replicas,
            wait_timeout=self.wait_timeout,
        )

    def handles(
        self, limits: HandleLimits, sessions: Callable[[str], SessionScope]
    ) -> RedisHandles:
        """A :class:`RedisHandles` under ``{prefix}:handles``: state handles every replica
        serves (``sessions`` builds a handle's session scope on a replica)."""
        from mcp_adapter.stores.redis_handles import RedisHandles

        return RedisHandles(
            self.client, self.key("handles"), limits, sessions=sessions, timeout=COMMAND_TIMEOUT
        )
