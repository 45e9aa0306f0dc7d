"""DNS-rebinding protection: the ``Host``/``Origin`` allow-lists a loopback server keeps."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from mcp.server.transport_security import TransportSecuritySettings

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is ``localhost`` or a loopback address (``127.0.0.0/8``, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def transport_security(
    host: str,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
) -> TransportSecuritySettings | None:
    """DNS-rebinding protection: on for every loopback host (as the SDK does), or explicit lists.

    On a loopback host (``localhost``, any of ``127.0.0.0/8``, ``::1``) the
    ``Host`` and ``Origin`` headers accepted are ``localhost``, ``127.0.0.1``,
    ``[::1]`` and the host itself, on any port; any other name is refused.
    """
    if allowed_hosts is not None or allowed_origins is not None:
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=list(allowed_hosts or ()),
            allowed_origins=list(allowed_origins or ()),
        )
    if is_loopback(host):
        names = ["127.0.0.1", "localhost", "[::1]"]
        bound = f"[{host.strip('[]')}]" if ":" in host else host
        if bound not in names:
            names.append(bound)
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{name}:*" for name in names],
            allowed_origins=[f"http://{name}:*" for name in names],
        )
    return None
