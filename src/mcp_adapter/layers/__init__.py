"""Built-in middleware: instances go in ``Server.middleware`` or a component's ``middleware``.

``AccessLog`` (one structured record per call), ``Timing`` (durations), ``ResponseLimit``
(refuse an output past a size) and ``RateLimit`` (calls per caller, in a ``RateStore``).
"""

from mcp_adapter.layers.access_log import FIELDS, AccessLog, AccessRecord, Outcome, outcome_of
from mcp_adapter.layers.rate_limit import (
    InMemoryRateStore,
    Per,
    Rate,
    RateLimit,
    RateStore,
    client_key,
    identity_key,
)
from mcp_adapter.layers.response_limit import ResponseLimit, response_size
from mcp_adapter.layers.timing import Timing

__all__ = [
    "FIELDS",
    "AccessLog",
    "AccessRecord",
    "InMemoryRateStore",
    "Outcome",
    "Per",
    "Rate",
    "RateLimit",
    "RateStore",
    "ResponseLimit",
    "Timing",
    "client_key",
    "identity_key",
    "outcome_of",
    "response_size",
]
