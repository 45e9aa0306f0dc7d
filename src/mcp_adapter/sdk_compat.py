"""What the adapter reads of the ``mcp`` SDK beyond its public API, in one place.

Each function names the private attribute it reads and the SDK version it was
checked against; an SDK upgrade that moves one fails here, not deep in a call.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

CHECKED_AGAINST = "2.3.0"
SDK_VERSION = version("mcp")

if SDK_VERSION != CHECKED_AGAINST:  # pragma: no cover - the lock pins the checked version
    import warnings

    warnings.warn(
        f"mcp_adapter was checked against mcp {CHECKED_AGAINST}; mcp {SDK_VERSION} may "
        "have moved what mcp_adapter.sdk_compat reads",
        stacklevel=2,
    )


def connection_of(ctx: Any) -> Any:
    """The SDK ``Connection`` a request arrived on (``None`` when it has none).

    ``ServerSession`` keeps it as ``_connection`` (mcp 2.3.0); its ``state`` and
    ``exit_stack`` are public and outlive a request exactly as long as the MCP
    session: the handshake's connection on stdio and stateful HTTP, one request
    on the stateless paths.
    """
    session = getattr(ctx, "session", None)
    return getattr(session, "_connection", None)
