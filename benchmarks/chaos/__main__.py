"""``python -m benchmarks.chaos --seconds N``: deploy the whole system on 127.0.0.1, drive
a bounded mixed load from many identities while faults are injected on a schedule, check
the invariants during the run and at its end, print one table and ``violations: N``, and
exit 1 when there is any (docs/reliability.md, "The chaos run").
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.chaos.run import Settings, chaos


def arguments(argv: list[str] | None = None) -> Settings:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.chaos", description=__doc__)
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the load (60)")
    parser.add_argument("--clients", type=int, default=6, help="concurrent clients (6)")
    parser.add_argument("--identities", type=int, default=32, help="callers (32)")
    parser.add_argument(
        "--plain-redis",
        action="store_true",
        help="one redis-server instead of Redis behind Sentinel (no failover faults)",
    )
    args = parser.parse_args(argv)
    if args.seconds < 20 or args.clients < 1 or args.identities < 4:
        parser.error("at least --seconds 20, --clients 1, --identities 4")
    return Settings(args.seconds, args.clients, args.identities, sentinel=not args.plain_redis)


def main(argv: list[str] | None = None) -> int:
    result = chaos(arguments(argv))
    print(result.table)
    return 1 if result.tally.total() else 0


if __name__ == "__main__":
    sys.exit(main())
