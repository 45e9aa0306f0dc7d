"""DNS-rebinding protection: the ``Host``/``Origin`` allow-lists a loopback server keeps."""

from __future__ import annotations

import ipaddress

from mcp.server.transport_security import TransportSecuritySettings


def is_loopback(host: str) -> bool:
    """Whether ``host`` is ``localhost`` or a loopback address (``127.0.0.0/8``, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def default_transport_security(host: str) -> TransportSecuritySettings | None:
    """The protection ``http_app`` keeps on ``host`` unless given ``transport_security``.

    On a loopback host (``localhost``, any of ``127.0.0.0/8``, ``::1``) it is on,
    as the SDK's own servers have it: the ``Host`` and ``Origin`` headers
    accepted are ``localhost``, ``127.0.0.1``, ``[::1]`` and the host itself, on
    any port; any other name is refused. On any other host, ``None`` (off).
    """
    if not is_loopback(host):
        return None
    names = ["127.0.0.1", "localhost", "[::1]"]
    bound = f"[{host.strip('[]')}]" if ":" in host else host
    if bound not in names:
        names.append(bound)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in names],
        allowed_origins=[f"http://{name}:*" for name in names],
    )
