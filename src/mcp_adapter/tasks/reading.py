"""A task's execution read from Docket's store in one round trip.

``Docket.get_execution`` reads the task's runs hash, builds the ``Execution`` from it,
then ``Execution.sync()`` reads the same hash again together with the progress hash:
two round trips to the store for every ``tasks/get``. :func:`execution_of` sends both
reads in one pipeline and builds the same ``Execution`` (the same function, arguments,
``when``, state, timestamps, result key and progress) with the pieces of Docket that
``get_execution`` and ``sync`` use (the private ones read in
:mod:`mcp_adapter.compat`), so each ``tasks/get`` of a task still
working costs one round trip instead of two (tests/tasks/test_reading.py holds it to
``get_execution``'s answer in every state). :class:`Asked` keeps the outcomes of
rounds that asked for input once read, so the ``tasks/get`` polls, the ``tasks/update``
and the ``tasks/cancel`` of a waiting task do not read the same result again.
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any

from mcp_adapter.compat import apply_execution_reads, queue_progress_read
from mcp_adapter.distribution import needs_extra
from mcp_adapter.tasks.waiting import asked
from mcp_adapter.tasks.wire import store_failed


async def execution_of(docket: Any, key: str) -> Any:
    """The task ``key``'s ``docket.Execution`` as ``docket.get_execution(key)`` answers it
    (``None`` when Docket holds no such task), read in one pipeline."""
    with needs_extra("tasks", "reading a task"):
        import cloudpickle  # type: ignore[import-untyped]  # Docket serializes arguments so
        from docket import Execution

    async with docket.redis() as redis, redis.pipeline() as pipe:
        pipe.hgetall(docket.runs_key(key))
        queue_progress_read(docket, key, pipe)
        data, progress_data = await pipe.execute()
    function_name, args, kwargs = data.get(b"function"), data.get(b"args"), data.get(b"kwargs")
    when = data.get(b"when")
    if not data or not function_name or not args or not kwargs or not when:
        return None
    execution = Execution(
        docket=docket,
        function=docket.tasks.get(function_name.decode(), _unknown),
        args=cloudpickle.loads(args),
        kwargs=cloudpickle.loads(kwargs),
        key=key,
        when=datetime.fromtimestamp(float(when.decode()), tz=UTC),
        attempt=1,
    )
    apply_execution_reads(execution, data, progress_data)
    return execution


async def _unknown() -> None:
    """Stands for a task function this process did not register (as Docket's placeholder)."""


ASKED_KEPT = 1024
"""The outcomes of rounds that asked for input one process keeps read (:class:`Asked`)."""


class Asked:
    """The outcomes of rounds that asked for input, as read from Docket's result store,
    by result key (the task's id and the run's generation: a later round of the task is
    a new run with a key of its own, so what a key holds never changes). A round that
    asked is read by every ``tasks/get`` while it waits and by each ``tasks/update`` and
    ``tasks/cancel``: read once here, not once per request. At most :data:`ASKED_KEPT`,
    the oldest read first forgotten; results and errors are never kept."""

    def __init__(self) -> None:
        self._kept: OrderedDict[str, Any] = OrderedDict()

    async def outcome(self, execution: Any) -> Any:
        """``execution.get_result()`` of a completed run (``None`` without a result).

        A run whose state names a result the result store does not hold is a read
        between two nodes, not an outcome: Docket reads the state and the result on
        two connection pools, and after a failover one of them can still be on the
        old primary (a replica now, behind) for a moment. That read is the store's
        failure (``-32603``, try again), never a task ended ``failed``."""
        key = execution.result_key
        if key is None or key not in self._kept:
            found = await execution.get_result()
            if found is None and key is not None:
                raise store_failed("does not hold the result of a task it says ended")
            if key is not None and asked(found) is not None:
                self._kept[key] = found
                if len(self._kept) > ASKED_KEPT:
                    self._kept.popitem(last=False)
            return found
        self._kept.move_to_end(key)
        return self._kept[key]
