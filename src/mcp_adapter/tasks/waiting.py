"""A task waiting for input: the tasks extension's ``input_required`` status.

A task's body runs in rounds, as a 2026-07-28 call does: a round whose resolvers (or
handler) ask the client ends with the round's questions instead of a result
(``{"input": {"requests": ..., "state": ...}}``, Docket's result of that run). While
it waits, ``tasks/get`` shows ``input_required`` with the questions not answered yet
under ``inputRequests``; ``tasks/update`` gives answers, one key at a time or all at
once. Once every question of the round has an answer, the next round is enqueued on
Docket under the same task id, carrying the round's state and the answers; it runs
the resolvers again, which take the answers only for the very questions they ask
(validated and pinned to each question's digest, as a retried call does).

Where things are kept, all in Docket's store (its Redis, or ``memory://``):

- the request, the owner, the round number, the creation time: the task's record
  (the Docket execution's arguments);
- the round's questions and state (recorded answers of earlier rounds, the digest of
  each question asked): the round's result in Docket's result store;
- the answers given so far to the round: one hash per task and round
  (``{docket}:mcp-input:{task}:{round}``), and the round's fate (``resume`` or
  ``cancel``, set once): one key beside it. Both expire with the task.

Nothing lives in a coroutine or a process: a waiting task holds no worker, no scope
and no thread, and another process sharing the store may answer or resume it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp import MCPError, types

INPUT = "input"
"""The key of a round's outcome that asked for input (instead of ``result``/``error``)."""

MAX_ANSWER_CHARS = 256 * 1024
"""The most characters of answers (keys and answers as JSON) one round of a task keeps, in
all its ``tasks/update`` requests."""

RESUME = "resume"
CANCEL = "cancel"

CLAIM_SECONDS = 15
"""Seconds one process holds the right to enqueue a resumed round: longer than a store
command may take (``Tasks.store_timeout``), so the round is enqueued once; after it, a
resume lost with the process or the store that took the last answer is enqueued again
by the next ``tasks/get``."""

_ANSWER = """
local held = 0
local kept = redis.call('HGETALL', KEYS[1])
for i = 1, #kept do
  held = held + #kept[i]
end
for i = 4, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 0 then
    held = held + #ARGV[i] + #ARGV[i + 1]
  end
end
if held > tonumber(ARGV[3]) then
  return -1
end
for i = 4, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 0 then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  end
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
if #redis.call('HGETALL', KEYS[1]) / 2 >= tonumber(ARGV[2]) then
  if redis.call('SET', KEYS[2], 'resume', 'NX', 'EX', ARGV[1]) then
    return redis.call('HGETALL', KEYS[1])
  end
end
return 0
"""
"""Keeps the first answer given to each key, unless the round's answers would then hold
more than ``ARGV[3]`` characters (keys and answers, as JSON: ``-1``, nothing kept), and
decides, once, that the round resumes when every question has one, answering then every
answer of the round (atomic: two updates racing resume it once, and cannot each stay under
the cap while both pass it)."""

_FATE = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then
  return ARGV[1]
end
return redis.call('GET', KEYS[1])
"""


def asked(outcome: Any) -> Mapping[str, Any] | None:
    """The questions and state of a round that asked, or ``None`` for a result or error."""
    if not isinstance(outcome, Mapping):
        return None
    found = outcome.get(INPUT)
    if not isinstance(found, Mapping) or not isinstance(found.get("requests"), Mapping):
        return None
    return found


def too_large() -> MCPError:
    return MCPError(
        types.INVALID_PARAMS,
        f"These answers are too large: a task keeps at most {MAX_ANSWER_CHARS} characters "
        "of answers per round, those given before included",
        {"limit": "max_answer_chars", "value": MAX_ANSWER_CHARS},
    )


class Waiting:
    """The answers to one task's questions, in its Docket's store."""

    def __init__(self, docket: Any) -> None:
        self.docket = docket

    def _keys(self, task_id: str, round_: int) -> tuple[str, str]:
        base = self.docket.key(f"mcp-input:{task_id}:{round_}")
        return base, f"{base}:fate"

    async def answers(self, task_id: str, round_: int) -> dict[str, Any]:
        """The answers given so far to the round, by key."""
        key, _ = self._keys(task_id, round_)
        async with self.docket.redis() as redis:
            stored = await redis.hgetall(key)
        return _decoded(stored)

    async def fate(self, task_id: str, round_: int) -> str | None:
        """``resume`` (every question answered), ``cancel``, or ``None`` (still waiting)."""
        _, key = self._keys(task_id, round_)
        async with self.docket.redis() as redis:
            found = await redis.get(key)
        return None if found is None else _text(found)

    async def pending(
        self, task_id: str, round_: int, requests: Mapping[str, Any]
    ) -> tuple[str | None, dict[str, Any]]:
        """The round's :meth:`fate` and its questions that have no answer yet, read in one
        round trip."""
        answers_key, fate_key = self._keys(task_id, round_)
        async with self.docket.redis() as redis, redis.pipeline() as pipe:
            pipe.get(fate_key)
            pipe.hgetall(answers_key)
            fate, stored = await pipe.execute()
        given = _decoded(stored)
        left = {key: request for key, request in requests.items() if key not in given}
        return (None if fate is None else _text(fate)), left

    async def answer(
        self,
        task_id: str,
        round_: int,
        requests: Mapping[str, Any],
        given: Mapping[str, Any],
        seconds: int,
    ) -> dict[str, Any] | None:
        """Keep the answers to keys the round asked (others are ignored, as is a second
        answer to a key); every answer of the round when this update was the one that
        completed it (the caller resumes the task), else ``None``. Answers that would make
        the round hold more than :data:`MAX_ANSWER_CHARS` are refused, none of them kept."""
        fields: list[str] = []
        for key in requests:
            answer = given.get(key)
            if not isinstance(answer, Mapping):
                continue  # no answer to this question (an answer is a JSON object)
            fields.extend((key, json.dumps(answer, separators=(",", ":"))))
        answers_key, fate_key = self._keys(task_id, round_)
        limit = str(MAX_ANSWER_CHARS)
        async with self.docket.redis() as redis:
            done = await redis.eval(
                _ANSWER, 2, answers_key, fate_key, str(seconds), str(len(requests)), limit, *fields
            )
        if not isinstance(done, list):  # -1: over the cap; 0: questions still open
            if int(done) == -1:
                raise too_large()
            return None
        return _decoded(dict(zip(done[::2], done[1::2], strict=True)))

    async def resume(
        self,
        task_id: str,
        record: Mapping[str, Any],
        waiting: Mapping[str, Any],
        answers: Mapping[str, Any],
        function: str,
    ) -> None:
        """Enqueue the round after the waiting one, with its state and answers, under the
        task's id, unless another process claimed it in the last :data:`CLAIM_SECONDS`
        (Docket keeps one run of a key scheduled or running)."""
        round_ = int(record.get("round", 0))
        base, _ = self._keys(task_id, round_)
        async with self.docket.redis() as redis:
            claimed = await redis.set(f"{base}:enqueue", "1", nx=True, ex=CLAIM_SECONDS)
        if not claimed:
            return
        given = {"state": waiting["state"], "answers": dict(answers)}
        request = {**record["request"], INPUT: given}
        resumed = {**record, "round": round_ + 1, "request": request}
        await self.docket.add(function, key=task_id)(record=resumed)

    async def cancel(self, task_id: str, round_: int, seconds: int) -> bool:
        """Whether the waiting round is cancelled now (``False``: it was resumed first).
        The change is announced on the task's state channel, as Docket announces its own,
        so a listener following the task hears it end."""
        _, fate_key = self._keys(task_id, round_)
        event = json.dumps({"type": "state", "key": task_id, "state": "cancelled"})
        async with self.docket.redis() as redis:
            fate = await redis.eval(_FATE, 1, fate_key, CANCEL, str(seconds))
            if _text(fate) != CANCEL:
                return False
            await redis.publish(self.docket.key(f"state:{task_id}"), event)
        return True


def _decoded(stored: Mapping[Any, Any]) -> dict[str, Any]:
    return {_text(name): json.loads(_text(value)) for name, value in stored.items()}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
