"""DNS-rebinding protection: the ``Host``/``Origin`` allow-lists a loopback server keeps."""

from __future__ import annotations

import ipaddress
import socket

from mcp.server.transport_security import TransportSecuritySettings

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def host_address(host: str) -> Address | None:
    """The IP address ``host`` spells, as binding a socket reads it; ``None`` for a name.

    IPv4 is read with ``inet_aton``'s rules, as the resolver does, so the
    shorthands that bind ``127.0.0.1`` are that address: ``127.1``, ``2130706433``,
    ``0x7f.1``, ``0177.0.0.1``. IPv6 may be bracketed and carry a zone (``%lo``).

    >>> str(host_address("127.1")), str(host_address("[::1]")), host_address("example.com")
    ('127.0.0.1', '::1', None)
    """
    text = host.strip("[]")
    if not text or any(char.isspace() for char in text):
        return None  # inet_aton would read "127.0.0.1 x" as 127.0.0.1; binding refuses it
    if ":" in text:
        try:
            return ipaddress.IPv6Address(text.split("%", 1)[0])
        except ValueError:
            return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(text))
    except OSError:
        return None


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine's loopback: ``localhost`` (any case, and any
    ``*.localhost``, RFC 6761), or any spelling of an address of ``127.0.0.0/8`` or
    ``::1`` (an IPv4 shorthand, an IPv4-mapped IPv6 address).

    >>> [is_loopback(h) for h in ("127.1", "LocalHost", "::ffff:127.0.0.1", "0.0.0.0")]
    [True, True, True, False]
    """
    name = host.strip("[]").rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    address = host_address(name)
    if address is None:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def default_transport_security(host: str) -> TransportSecuritySettings | None:
    """The protection ``http_app`` keeps on ``host`` unless given ``transport_security``.

    On a loopback host (:func:`is_loopback`: ``localhost``, any spelling of an
    address of ``127.0.0.0/8`` or ``::1``) it is on, as the SDK's own servers
    have it: the ``Host`` and ``Origin`` headers accepted are ``localhost``,
    ``127.0.0.1``, ``[::1]``, the host as spelled and the address it spells, on
    any port or none (a proxy's ``Host: $host`` drops the port); any other name is
    refused. On any other host, ``None`` (off).
    """
    if not is_loopback(host):
        return None
    names = ["127.0.0.1", "localhost", "[::1]"]
    spelled = host.strip("[]").lower()
    address = host_address(spelled)
    for name in (spelled, None if address is None else str(address)):
        if name is None:
            continue
        shown = f"[{name}]" if ":" in name else name
        if shown not in names:
            names.append(shown)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*names, *(f"{name}:*" for name in names)],
        allowed_origins=[
            *(f"http://{name}" for name in names),
            *(f"http://{name}:*" for name in names),
        ],
    )
