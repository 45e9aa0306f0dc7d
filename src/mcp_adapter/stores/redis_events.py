"""An :class:`~mcp_adapter.stores.events.EventLog` in Redis: resumable streams shared by replicas.

The same four calls and the same limits as the in-memory log, kept by Lua scripts so
that each append, trim and eviction is one atomic step however many replicas write.
Keys, under the owner's ``prefix``:

- ``{prefix}:stream:{session}:{stream}``: the stream's events, oldest first, a list of
  records (``id``, a newline, then ``P`` for a priming event or ``D`` and the message);
- ``{prefix}:event:{id}``: the session and stream an event id belongs to;
- ``{prefix}:session:{session}:streams`` and ``...:sizes``: the session's streams,
  oldest first, and the bytes each holds;
- ``{prefix}:sessions`` (bytes per session) and ``{prefix}:bytes`` (in all): what the
  global cap is counted on.

Every key but the last two expires ``ttl`` seconds after its session's last event
(a replica that dies never closes its sessions); those two are the deployment's
totals, so they have no TTL: the bytes of a session whose keys expired are given back
once the total goes over ``max_bytes``: each append that finds it over checks
``SWEEP`` sessions drawn at random, then the largest session, before it evicts
anything live. A
stream id is hashed into key names (the client chooses request ids); session keys
are the server's own random hex.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mcp.server.streamable_http import EventId, StreamId

from mcp_adapter.distribution import needs_extra
from mcp_adapter.errors import logger
from mcp_adapter.stores.events import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_BYTES_PER_STREAM,
    DEFAULT_MAX_EVENTS_PER_STREAM,
    EVENT_OVERHEAD,
    StoredEvent,
    check_limits,
)

if TYPE_CHECKING:
    from redis.asyncio import Redis

DEFAULT_EVENT_TTL = 3600
"""Seconds a session's events are kept after its last one (a session that ends drops them
at once)."""

SWEEP = 16
"""Sessions checked, per append that finds the total over ``max_bytes``, for keys that
expired (their bytes are given back before anything live is evicted)."""

_LIBRARY = """
local p = ARGV[1]
local overhead = tonumber(ARGV[2])
local total_key, ranking = p .. ':bytes', p .. ':sessions'
local function stream_key(s, k) return p .. ':stream:' .. s .. ':' .. k end
local function order_key(s) return p .. ':session:' .. s .. ':streams' end
local function sizes_key(s) return p .. ':session:' .. s .. ':sizes' end
local function event_key(e) return p .. ':event:' .. e end
local function parse(r)
  local nl = string.find(r, '\\n', 1, true)
  local size = overhead
  if string.sub(r, nl + 1, nl + 1) == 'D' then size = overhead + #r - nl - 1 end
  return string.sub(r, 1, nl - 1), size
end
local function account(s, k, delta)
  redis.call('HINCRBY', sizes_key(s), k, delta)
  local score = tonumber(redis.call('ZINCRBY', ranking, delta, s))
  if score <= 0 then redis.call('ZREM', ranking, s) end
  redis.call('INCRBY', total_key, delta)
end
local function forget_stream(s, k)
  redis.call('HDEL', sizes_key(s), k)
  redis.call('LREM', order_key(s), 1, k)
  redis.call('DEL', stream_key(s, k))
end
local function drop_stream(s, k)
  for _, r in ipairs(redis.call('LRANGE', stream_key(s, k), 0, -1)) do
    local id = parse(r)
    redis.call('DEL', event_key(id))
  end
  local held = tonumber(redis.call('HGET', sizes_key(s), k) or '0')
  if held ~= 0 then account(s, k, -held) end
  forget_stream(s, k)
end
local function drop_oldest_event(s, k)
  local r = redis.call('LPOP', stream_key(s, k))
  if not r then
    drop_stream(s, k)
    return
  end
  local id, size = parse(r)
  redis.call('DEL', event_key(id))
  account(s, k, -size)
  if redis.call('LLEN', stream_key(s, k)) == 0 then drop_stream(s, k) end
end
local function forget_session(s)
  local score = redis.call('ZSCORE', ranking, s)
  if score then
    redis.call('ZREM', ranking, s)
    redis.call('INCRBY', total_key, -tonumber(score))
  end
end
"""

_APPEND = (
    _LIBRARY
    + """
local s, k, stream, id, record = ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local size, max_events, max_stream = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local max_bytes, ttl, sweep = tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13])
if redis.call('HEXISTS', sizes_key(s), k) == 0 then redis.call('RPUSH', order_key(s), k) end
redis.call('RPUSH', stream_key(s, k), record)
account(s, k, size)
redis.call('SET', event_key(id), s .. '\\n' .. stream, 'EX', ttl)
for _, key in ipairs({stream_key(s, k), order_key(s), sizes_key(s)}) do
  redis.call('EXPIRE', key, ttl)
end
while true do
  local held = tonumber(redis.call('HGET', sizes_key(s), k) or '0')
  if redis.call('LLEN', stream_key(s, k)) <= max_events and held <= max_stream then break end
  drop_oldest_event(s, k)
end
if tonumber(redis.call('GET', total_key) or '0') > max_bytes then
  for _, other in ipairs(redis.call('ZRANDMEMBER', ranking, sweep)) do
    if redis.call('EXISTS', order_key(other)) == 0 then forget_session(other) end
  end
end
while tonumber(redis.call('GET', total_key) or '0') > max_bytes do
  local top = redis.call('ZREVRANGE', ranking, 0, 0)[1]
  if not top then
    redis.call('SET', total_key, 0)
    break
  end
  local oldest = redis.call('LINDEX', order_key(top), 0)
  if oldest then drop_stream(top, oldest) else forget_session(top) end
end
return 1
"""
)

_DROP_SESSION = (
    _LIBRARY
    + """
local s = ARGV[3]
for _, k in ipairs(redis.call('LRANGE', order_key(s), 0, -1)) do drop_stream(s, k) end
forget_session(s)
redis.call('DEL', order_key(s), sizes_key(s))
return 1
"""
)


def _stream_key(stream: StreamId) -> str:
    """The stream's part of a key name: a digest, whatever the client's request id is."""
    return hashlib.sha256(stream.encode()).hexdigest()[:32]


class RedisEventLog:
    """An :class:`~mcp_adapter.stores.events.EventLog` in Redis, bounded per stream and in all.

    ``client`` is a ``redis.asyncio.Redis``; ``prefix`` namespaces every key (one per
    served server: replicas of it share the prefix, other servers must not). ``ttl``:
    seconds a session's events outlive its last one.
    """

    def __init__(
        self,
        client: Redis,
        prefix: str,
        *,
        max_events_per_stream: int = DEFAULT_MAX_EVENTS_PER_STREAM,
        max_bytes_per_stream: int = DEFAULT_MAX_BYTES_PER_STREAM,
        max_bytes: int = DEFAULT_MAX_BYTES,
        ttl: int = DEFAULT_EVENT_TTL,
    ) -> None:
        check_limits(max_events_per_stream, max_bytes_per_stream, max_bytes)
        with needs_extra("redis", "the Redis event log"):
            from redis.exceptions import RedisError
        self._unreachable: tuple[type[Exception], ...] = (RedisError, OSError)
        if ttl < 1:
            raise ValueError(f"ttl must be at least 1 second, not {ttl!r}")
        self.client = client
        self.prefix = prefix
        self.max_events_per_stream = max_events_per_stream
        self.max_bytes_per_stream = max_bytes_per_stream
        self.max_bytes = max_bytes
        self.ttl = ttl
        self._append = client.register_script(_APPEND)
        self._drop_session = client.register_script(_DROP_SESSION)

    async def size(self) -> int:
        """Bytes held, as counted against ``max_bytes`` (all replicas together)."""
        return int(await self.client.get(f"{self.prefix}:bytes") or 0)

    async def append(self, session: str, stream: StreamId, event: StoredEvent) -> None:
        if event.size > self.max_bytes_per_stream:
            return
        flag = b"P" if event.data is None else b"D" + event.data
        record = event.event_id.encode() + b"\n" + flag
        try:
            await self._append(
                args=[
                    *self._base(),
                    session,
                    _stream_key(stream),
                    stream,
                    event.event_id,
                    record,
                    event.size,
                    self.max_events_per_stream,
                    self.max_bytes_per_stream,
                    self.max_bytes,
                    self.ttl,
                    SWEEP,
                ]
            )
        except self._unreachable as exc:
            # the SDK's session router stores each message before it sends it: an error
            # here would end the router, and every later request of the session would
            # wait for its answer forever. The event goes out live, only not resumable.
            logger.warning("Redis unreachable (%s): event sent but not kept for replay", exc)

    async def locate(self, event_id: EventId) -> tuple[str, StreamId] | None:
        found = await self.client.get(f"{self.prefix}:event:{event_id}")
        if found is None:
            return None
        session, _, stream = _text(found).partition("\n")
        return session, stream

    async def events_after(
        self, session: str, stream: StreamId, event_id: EventId
    ) -> Sequence[StoredEvent] | None:
        key = f"{self.prefix}:stream:{session}:{_stream_key(stream)}"
        records: list[Any] = await self.client.lrange(key, 0, -1)
        events = [_event(record) for record in records]
        ids = [event.event_id for event in events]
        if event_id not in ids:
            return None
        return events[ids.index(event_id) + 1 :]

    async def drop_session(self, session: str) -> None:
        await self._drop_session(args=[*self._base(), session])

    def _base(self) -> list[str | int]:
        return [self.prefix, EVENT_OVERHEAD]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _event(record: bytes | str) -> StoredEvent:
    raw = record.encode() if isinstance(record, str) else record
    event_id, _, rest = raw.partition(b"\n")
    data = rest[1:] if rest[:1] == b"D" else None
    return StoredEvent(event_id.decode(), data)
