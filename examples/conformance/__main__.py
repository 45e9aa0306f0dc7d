"""``python -m examples.conformance [--port P]``: serve the conformance server on 127.0.0.1."""

from __future__ import annotations

import argparse
import socket

import uvicorn
from examples.conformance.app import create_app


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m examples.conformance")
    parser.add_argument("--port", type=int, default=3001, help="0 picks a free port")
    args = parser.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(128)
    port = sock.getsockname()[1]
    print(f"MCP server 'conformance' at http://127.0.0.1:{port}/mcp (streamable HTTP)", flush=True)
    uvicorn.Server(uvicorn.Config(create_app(), log_level="warning")).run(sockets=[sock])


if __name__ == "__main__":
    main()
