"""State that outlives a request: events of resumable streams, rate counts, change
notifications, answered input rounds, state handles. Each protocol has an in-memory
store (one process) and a Redis one (replicas sharing one Redis:
``pip install 'mcp-adapter-di[redis]'``).

Imports nothing of the package but its root modules, so every part above may use it.
The Redis stores are imported when first asked for: serving without Redis never
imports ``redis``.
"""

from typing import TYPE_CHECKING

from mcp_adapter.lazy_exports import on_first_use
from mcp_adapter.stores.events import EventLog, InMemoryEventLog, StoredEvent
from mcp_adapter.stores.handles import (
    HandleLimits,
    HandleStore,
    HandlesUnavailable,
    MemoryHandles,
    TooManyHandles,
)
from mcp_adapter.stores.rates import InMemoryRateStore, Rate, RateStore
from mcp_adapter.stores.rounds import (
    DEFAULT_MAX_ROUNDS,
    LedgerFull,
    LedgerUnavailable,
    MemoryRounds,
    RoundLedger,
)

if TYPE_CHECKING:
    from mcp_adapter.stores.redis_bus import RedisSubscriptionBus
    from mcp_adapter.stores.redis_events import RedisEventLog
    from mcp_adapter.stores.redis_handles import RedisHandles
    from mcp_adapter.stores.redis_rates import RedisRateStore
    from mcp_adapter.stores.redis_rounds import RedisRounds
    from mcp_adapter.stores.shared import SharedRedis

_ON_FIRST_USE = {
    "mcp_adapter.stores.redis_events": ("RedisEventLog",),
    "mcp_adapter.stores.redis_handles": ("RedisHandles",),
    "mcp_adapter.stores.redis_rates": ("RedisRateStore",),
    "mcp_adapter.stores.redis_rounds": ("RedisRounds",),
    "mcp_adapter.stores.redis_bus": ("RedisSubscriptionBus",),
    "mcp_adapter.stores.shared": ("SharedRedis",),
}

__getattr__ = on_first_use(globals(), _ON_FIRST_USE)


__all__ = [
    "DEFAULT_MAX_ROUNDS",
    "EventLog",
    "HandleLimits",
    "HandlesUnavailable",
    "HandleStore",
    "MemoryHandles",
    "TooManyHandles",
    "InMemoryEventLog",
    "InMemoryRateStore",
    "LedgerFull",
    "LedgerUnavailable",
    "MemoryRounds",
    "Rate",
    "RateStore",
    "RedisEventLog",
    "RedisHandles",
    "RedisRateStore",
    "RedisRounds",
    "RedisSubscriptionBus",
    "RoundLedger",
    "SharedRedis",
    "StoredEvent",
]
