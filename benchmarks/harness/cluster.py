"""What a deployment of replicas on 127.0.0.1 is made of, shared by the chaos run
(``benchmarks/chaos/deploy.py``) and the replica tests (``tests/replicas/cluster.py``):
haproxy's configuration (docs/deployment.md shows the same) and ``redis-server``'s
command line.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from benchmarks.harness.processes import HOST

HAPROXY_CONFIG = """\
global
    maxconn 1000

defaults
    mode http
    timeout connect 5s
    timeout client 120s
    timeout server 120s
    option redispatch
    retries 3

frontend mcp
    bind 127.0.0.1:{port}
    default_backend replicas

backend replicas
    balance roundrobin
    option httpchk GET /readyz
{stick}{servers}
"""
STICKY = """\
    stick-table type string len 64 size 100k expire 30m
    stick match req.hdr(mcp-session-id)
    stick store-response res.hdr(mcp-session-id)
"""


def haproxy_config(port: int, servers: Sequence[tuple[str, int]], *, sticky: bool) -> str:
    """haproxy in front of ``servers`` (name, port), each checked on ``/readyz``; sessions
    kept to their replica when ``sticky`` (docs/deployment.md)."""
    lines = "".join(f"    server {name} {HOST}:{p} check inter 500ms\n" for name, p in servers)
    return HAPROXY_CONFIG.format(
        port=port, stick=STICKY if sticky else "", servers=lines.rstrip("\n")
    )


def redis_command(executable: str, port: int, folder: Path, *, durable: bool = False) -> list[str]:
    """``redis-server`` on ``port`` of 127.0.0.1 keeping its files in ``folder``: without
    persistence, or, ``durable``, append-only (a restart keeps what was written)."""
    persistence = ["--appendonly", "yes", "--appendfsync", "always"] if durable else []
    persistence = persistence or ["--appendonly", "no"]
    return [
        executable,
        "--port",
        str(port),
        "--bind",
        HOST,
        "--save",
        "",
        *persistence,
        "--dir",
        str(folder),
    ]
