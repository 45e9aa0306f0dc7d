"""Who calls a server served off HTTP: the identity ``serve_stdio(identity=...)`` gives
every request, since stdio has no authentication of its own."""

from __future__ import annotations

import getpass
import os

from mcp_adapter.declare.request import Identity

STDIO_CLIENT = "stdio"
"""The ``client_id`` of :func:`os_user`'s identity."""


def os_user() -> Identity:
    """The operating-system user running this process, as the caller.

    Its ``subject`` is the login name of the process's real user id (read from the
    user database, not from ``$USER``, which the environment could say anything
    in), its ``client_id`` ``"stdio"``, and it has no scopes. Whoever can start the
    server as that user is that user: it is the identity a local client already has.

    >>> os_user().client_id
    'stdio'
    """
    return Identity(subject=_login_name(), client_id=STDIO_CLIENT)


def _login_name() -> str:
    try:
        import pwd
    except ImportError:  # not a POSIX system: the name the platform reports
        return getpass.getuser()
    uid = os.getuid()
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:  # a uid with no entry (a container's arbitrary user)
        return str(uid)
