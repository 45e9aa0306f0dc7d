"""The uvicorn config that applies an app's connection limits: for ``serve`` and for users.

Run an ``http_app`` under uvicorn yourself with its limits in force::

    config = uvicorn_config(app, host="127.0.0.1", port=8000)
    uvicorn.Server(config).run()
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Any

import uvicorn
from starlette.applications import Starlette

from mcp_adapter.serving.internals import LimitedH11Protocol, keep_sse_streams_on_shutdown
from mcp_adapter.serving.limits import HttpLimits, connection_cap, raise_fd_limit


class LimitedConfig(uvicorn.Config):
    """A ``uvicorn.Config`` carrying the two limits uvicorn has no setting for.

    ``mcp_header_timeout`` and ``mcp_max_connections`` are read by
    :class:`~mcp_adapter.serving.internals.LimitedH11Protocol`, its ``http=``
    protocol. A module-level class, so ``--workers`` can pickle it.
    """

    def __init__(
        self,
        app: Any,
        *,
        header_timeout: float | None,
        max_connections: int,
        **kwargs: Any,
    ) -> None:
        super().__init__(app, http=LimitedH11Protocol, **kwargs)
        self.mcp_header_timeout = header_timeout
        self.mcp_max_connections = max_connections

    def load(self) -> None:
        """Load as uvicorn does; in every process (``--workers`` too), let SSE calls drain."""
        keep_sse_streams_on_shutdown()
        super().load()


def trusted_proxies(addresses: Sequence[str]) -> tuple[str, ...]:
    """``addresses`` checked: each an IP address or network (``10.0.0.0/8``), or ``*``.

    >>> trusted_proxies(["10.0.0.1", " 192.168.0.0/16 "])
    ('10.0.0.1', '192.168.0.0/16')
    """
    checked: list[str] = []
    for raw in addresses:
        address = raw.strip()
        if address != "*":
            try:
                ipaddress.ip_network(address, strict=False)
            except ValueError:
                raise ValueError(
                    f"{address!r} is not an IP address or network of a trusted proxy"
                ) from None
        checked.append(address)
    if not checked:
        raise ValueError("no trusted proxy address given")
    return tuple(checked)


def uvicorn_config(
    app: Starlette | str,
    *,
    limits: HttpLimits | None = None,
    forwarded_allow_ips: Sequence[str] | None = None,
    **kwargs: Any,
) -> LimitedConfig:
    """A uvicorn config for ``app`` that enforces its :class:`HttpLimits`.

    ``limits`` defaults to ``app.state.mcp_http_limits`` (what ``http_app``
    recorded); pass it when ``app`` is an import string. Raises the process's
    soft file-descriptor limit to the hard one, and caps connections below it
    (``max_connections``, or :func:`connection_cap` of the fd limit). Sets
    ``limit_concurrency`` to that cap (uvicorn answers 503 beyond it),
    ``timeout_keep_alive``, ``timeout_graceful_shutdown`` (the drain on SIGTERM)
    and the header deadline. Other ``kwargs`` go to ``uvicorn.Config``.

    ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are trusted only from the
    proxies in ``forwarded_allow_ips`` (addresses, networks, or ``*``): without
    it they are ignored from every peer, loopback included (uvicorn on its own
    trusts them from ``127.0.0.1`` and ``::1``, which lets any local client pick
    the address that per-client limits count it under).
    """
    if limits is None:
        if isinstance(app, str):
            raise TypeError("pass limits= when app is an import string")
        limits = app.state.mcp_http_limits
    assert limits is not None
    fd_limit = raise_fd_limit()
    cap = limits.max_connections if limits.max_connections is not None else connection_cap(fd_limit)
    if forwarded_allow_ips is None:
        kwargs.setdefault("proxy_headers", False)
    else:
        kwargs["proxy_headers"] = True
        kwargs["forwarded_allow_ips"] = list(trusted_proxies(forwarded_allow_ips))
    kwargs.setdefault("limit_concurrency", cap)
    kwargs.setdefault("timeout_keep_alive", limits.keep_alive_timeout)
    if limits.shutdown_timeout is not None:
        kwargs.setdefault("timeout_graceful_shutdown", limits.shutdown_timeout)
    return LimitedConfig(app, header_timeout=limits.header_timeout, max_connections=cap, **kwargs)
