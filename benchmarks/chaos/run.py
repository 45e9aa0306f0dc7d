"""One chaos run: the deployment, the load and the listeners, the faults on their
schedule, then the checks at the end; its :class:`Result` holds the figures and the table.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import httpx2
from mcp.shared.exceptions import MCPDeprecationWarning

from benchmarks.chaos.deploy import Deployment, deployed
from benchmarks.chaos.faults import FAULTS, Faults, Recovery
from benchmarks.chaos.invariants import Tally, Watcher, check_ledger
from benchmarks.chaos.load import Load
from benchmarks.chaos.report import render
from benchmarks.chaos.streams import Listeners

SAMPLE_EVERY = 2.0
PERIOD = (3.0, 20.0)
"""Seconds a recovery is watched after each fault, at least and at most: the run's length
after the warm-up shared by the faults of the schedule, less ``FAULT_COST``, within
these. Every fault of the schedule is injected at least once, even past ``--seconds``."""
FAULT_COST = 3.5
"""Seconds one fault takes, on average over the schedule (a restart waits until the
process is ready; a stall lasts ``faults.STALL``; slow readers ``faults.SLOW``)."""


async def sample(watcher: Watcher, deployment: Deployment) -> None:
    while True:
        await asyncio.to_thread(watcher.sample, deployment.processes())
        await asyncio.sleep(SAMPLE_EVERY)


@dataclass
class Settings:
    seconds: float = 60.0
    clients: int = 6
    identities: int = 32
    sentinel: bool = True
    """Redis behind Sentinel (``False``: one ``redis-server``, ``--plain-redis``)."""
    faults: tuple[str, ...] = FAULTS
    """The schedule (``faults.FAULTS``, in its order; the Sentinel ones left out without it)."""


@dataclass
class Result:
    tally: Tally
    recoveries: list[Recovery]
    table: str


async def run(deployment: Deployment, args: Settings) -> Result:
    tally = Tally()
    warmup = min(10.0, args.seconds * 0.2)
    watcher = Watcher(warmup)
    limits = httpx2.Limits(max_connections=4 * args.clients, max_keepalive_connections=args.clients)
    async with httpx2.AsyncClient(limits=limits) as http:
        load = Load(deployment, tally, args.identities, http)
        faults = Faults(deployment, load, tally, args.faults)
        listeners = Listeners(deployment.url, tally)
        start = time.monotonic()
        end = start + args.seconds
        background = [asyncio.create_task(sample(watcher, deployment)), *listeners.start()]
        clients = [asyncio.create_task(load.client()) for _ in range(args.clients)]
        try:
            await asyncio.sleep(warmup)
            share = (args.seconds - warmup) / len(faults.schedule) - FAULT_COST
            period = max(PERIOD[0], min(PERIOD[1], share))
            while time.monotonic() < end or faults.turn < len(faults.schedule):
                started = time.monotonic()
                await faults.inject(watch=period)
                await asyncio.sleep(max(0.0, started + period - time.monotonic()))
            load.stopping = True
            loaded = time.monotonic()
            await asyncio.gather(*clients)
            await load.settle(args.clients)
        finally:
            for task in [*background, *clients]:
                task.cancel()
            for task in [*background, *clients]:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        await asyncio.to_thread(watcher.sample, deployment.processes())
    bodies = check_ledger(deployment.ledger_url, tally)
    watcher.check(tally)
    table = render(
        tally,
        faults.recoveries,
        watcher,
        seconds=loaded - start,
        bodies=bodies,
        reopened=listeners.reopened,
    )
    return Result(tally, faults.recoveries, table)


def chaos(settings: Settings) -> Result:
    """Deploy in a temporary folder, run, stop everything (also on an error or Ctrl-C)."""
    warnings.filterwarnings("ignore", category=MCPDeprecationWarning)  # resources/subscribe
    logging.getLogger("mcp.client.streamable_http").setLevel(logging.ERROR)  # dead sessions
    with contextlib.ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="chaos-")))
        running = stack.enter_context(deployed(folder, sentinel=settings.sentinel))
        return asyncio.run(run(running, settings))
