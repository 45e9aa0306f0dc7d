"""The Lua scripts of :class:`~mcp_adapter.stores.redis_handles.RedisHandles`, each one
atomic step on Redis's clock (``TIME``): add a handle within the caps, take it for a call,
release it, renew a call's lease, close it (and publish the close note), sweep the expired.

Their keys are ``[handle, owner's set, every handle]`` (the sweep: ``[every handle]``).
"""

from __future__ import annotations

FOREVER = 2**53 - 1
"""The score (milliseconds) of a handle that does not expire (no idle timeout)."""
_NOW = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local function owner_expiry(key)
  local top = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if #top == 0 then return end
  local last = tonumber(top[2])
  if last >= FOREVER then redis.call('PERSIST', key) else redis.call('PEXPIREAT', key, last) end
end
""".replace("FOREVER", str(FOREVER))

ADD = (
    _NOW
    + """
local ttl, per, most = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if per > 0 and redis.call('ZCARD', KEYS[2]) >= per then return 1 end
if most > 0 and redis.call('ZCARD', KEYS[3]) >= most then return 2 end
local score = FOREVER
redis.call('HSET', KEYS[1], 'u', 0)
if ttl > 0 then
  score = now + ttl
  redis.call('PEXPIRE', KEYS[1], ttl)
end
redis.call('ZADD', KEYS[2], score, ARGV[4])
redis.call('ZADD', KEYS[3], score, ARGV[4])
owner_expiry(KEYS[2])
return 0
""".replace("FOREVER", str(FOREVER))
)

_EXTEND = """
local function extend(ttl, only_longer)
  if ttl <= 0 then return end
  local left = redis.call('PTTL', KEYS[1])
  if left < 0 or (only_longer and left >= ttl) then return end
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
  redis.call('ZADD', KEYS[3], now + ttl, ARGV[1])
  owner_expiry(KEYS[2])
end
"""

TAKE = (
    _NOW
    + _EXTEND
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[1], 'u', 1)
extend(tonumber(ARGV[2]), true)
return 1
"""
)

RELEASE = (
    _NOW
    + _EXTEND
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local users = redis.call('HINCRBY', KEYS[1], 'u', -1)
if users < 0 then
  redis.call('HSET', KEYS[1], 'u', 0)
  users = 0
end
extend(tonumber(ARGV[2]), users > 0)
return 1
"""
)

LEASE = (
    _NOW
    + _EXTEND
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
extend(tonumber(ARGV[2]), true)
return 1
"""
)

CLOSE = (
    _NOW
    + """
local gone = redis.call('DEL', KEYS[1])
if gone == 1 then redis.call('PUBLISH', ARGV[2], ARGV[1]) end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
owner_expiry(KEYS[2])
return gone
"""
)

SWEEP = _NOW + "return redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)"
