"""``redis+sentinel://`` URLs: a Redis whose primary Redis Sentinel names, followed
through failovers.

The URL form is Docket's (``pydocket``'s ``redis+sentinel://``, so one ``--redis`` URL
serves the task store and everything else)::

    redis+sentinel://[user:password@]host[:port][,host2[:port2],...]/service[/db][?options]

``host:port`` are the Sentinel daemons (port 26379 when left out), ``service`` the name
they monitor (``sentinel monitor <service> ...``), ``db`` the database (0). The user and
password are the data nodes'; ``?sentinel_username=``/``?sentinel_password=`` are the
Sentinel daemons'. ``rediss+sentinel://`` turns TLS on for both (the ``ssl_*`` options
then apply to both). Every other option is a redis-py connection option, read as in a
``redis://`` URL (``?socket_timeout=3``); it wins over the adapter's defaults.

Docket's parser lives in a private module (``docket._redis_sentinel``) and the ``redis``
extra does not install Docket, so the grammar is written here; a test checks that both
read every example alike. The client is made in :mod:`mcp_adapter.stores.redis_sentinel`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

from mcp_adapter.distribution import needs_extra

SENTINEL_SCHEMES = ("redis+sentinel", "rediss+sentinel")
DEFAULT_SENTINEL_PORT = 26379
"""The port of a Sentinel daemon the URL lists without one."""


@dataclass(frozen=True, slots=True)
class SentinelUrl:
    """What a ``redis+sentinel://`` URL names."""

    sentinels: tuple[tuple[str, int], ...]
    service: str
    db: int = 0
    connection: dict[str, Any] = field(default_factory=dict)
    """redis-py options of the connections to the primary (credentials, TLS, the query)."""
    sentinel: dict[str, Any] = field(default_factory=dict)
    """redis-py options of the connections to the Sentinel daemons (credentials, TLS)."""


def is_sentinel_url(url: str) -> bool:
    """Whether ``url`` names its primary through Redis Sentinel.

    >>> is_sentinel_url("redis+sentinel://s1/mymaster"), is_sentinel_url("redis://c")
    (True, False)
    """
    return url.partition("://")[0] in SENTINEL_SCHEMES


def split_netloc(url: str) -> tuple[str, str, str]:
    """``url`` as (``scheme://``, its netloc, the rest), split by hand: ``urlsplit``
    refuses a netloc listing several hosts when one is an IPv6 ``[...]``.

    >>> split_netloc("redis+sentinel://a:1,[::1]:2/mymaster/0?x=1")
    ('redis+sentinel://', 'a:1,[::1]:2', '/mymaster/0?x=1')
    """
    scheme, _, rest = url.partition("://")
    end = min((i for i in (rest.find(c) for c in "/?#") if i != -1), default=len(rest))
    return f"{scheme}://", rest[:end], rest[end:]


def parse_sentinel_url(url: str) -> SentinelUrl:
    """The Sentinel daemons, service, database and options ``url`` names; a ValueError
    saying what is wrong otherwise.

    >>> parsed = parse_sentinel_url("redis+sentinel://:pw@s1,s2:26380/mymaster/2")
    >>> parsed.sentinels, parsed.service, parsed.db, parsed.connection
    ((('s1', 26379), ('s2', 26380)), 'mymaster', 2, {'password': 'pw'})
    """
    scheme, netloc, rest = split_netloc(url)
    userinfo, _, hosts = netloc.rpartition("@")
    sentinels = tuple(_member(m.strip()) for m in hosts.split(",") if m.strip())
    if not sentinels:
        raise ValueError("a redis+sentinel:// URL lists at least one Sentinel host")
    tail = urlsplit(f"redis://placeholder{rest}")
    segments = [segment for segment in tail.path.split("/") if segment]
    if not segments:
        raise ValueError(
            "a redis+sentinel:// URL names the service Sentinel monitors, "
            "e.g. redis+sentinel://127.0.0.1:26379/mymaster"
        )
    db = 0
    if len(segments) > 1:
        try:
            db = int(segments[1])
        except ValueError:
            raise ValueError(
                f"the database of a Sentinel URL is a number, not {segments[1]!r}"
            ) from None
    tls = scheme == "rediss+sentinel://"
    query = parse_qs(tail.query, keep_blank_values=True)
    sentinel: dict[str, Any] = {}
    for option in ("username", "password"):
        value = query.pop(f"sentinel_{option}", [""])[0]
        if value:
            sentinel[option] = value
    connection: dict[str, Any] = {}
    if query:  # redis-py reads the options as it reads a redis:// URL's
        with needs_extra("redis", "Redis Sentinel"):
            from redis.asyncio.connection import parse_url

        pairs = [(name, value) for name, values in query.items() for value in values]
        options: dict[str, Any] = dict(parse_url(f"redis:///?{urlencode(pairs)}"))
        for governed in ("db", "username", "password"):  # the path and userinfo say these
            options.pop(governed, None)
        connection.update(options)
        if tls:
            sentinel.update({k: v for k, v in options.items() if k.startswith("ssl_")})
    user, _, password = userinfo.partition(":")
    if user:
        connection["username"] = unquote(user)
    if password:
        connection["password"] = unquote(password)
    if tls:
        connection["ssl"] = sentinel["ssl"] = True
    return SentinelUrl(sentinels, segments[0], db, connection, sentinel)


def _member(member: str) -> tuple[str, int]:
    parsed = urlsplit(f"//{member}")
    if not parsed.hostname:
        raise ValueError(f"no host in the Sentinel member {member!r}")
    try:
        port = parsed.port
    except ValueError:
        raise ValueError(f"no valid port in the Sentinel member {member!r}") from None
    return parsed.hostname, DEFAULT_SENTINEL_PORT if port is None else port
