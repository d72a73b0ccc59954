"""Scoring from asyncio code (veRL's reward loop, any async trainer): many coroutines each await the
reward of one completion, and the calls that arrive together go to `cogen serve` as one
`/v1/score` request (one idempotency key, retried and failed over between replicas by `Cogen`), run
in a thread so that the event loop never blocks. Completions of one task that arrive together form
one group, as the curriculum wants them.

    scorer = AsyncBatchScorer(Cogen(["http://a:8787", "http://b:8787"]))
    result = await scorer.score(task_id, completion)   # ScoreResult: reward, reason, answer
"""

from __future__ import annotations

import asyncio
from typing import List, Optional, Tuple

from .client import Cogen, ScoreResult


class AsyncBatchScorer:
    """Batches concurrent `score` calls of one event loop into `/v1/score` requests.

    A batch goes when `window` seconds passed since its first call, or when it holds `max_items`
    completions. Every caller of a batch gets its own result, or the batch's error.
    """

    def __init__(self, env: Cogen, window: float = 0.01, max_items: Optional[int] = None):
        self.env = env
        self.window = window
        self.max_items = max_items or env.max_items
        self._pending: List[Tuple[str, str, "asyncio.Future[ScoreResult]"]] = []
        self._timer: Optional[asyncio.TimerHandle] = None
        self._sending: set = set()

    async def score(self, task_id: str, completion: str) -> ScoreResult:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[ScoreResult] = loop.create_future()
        self._pending.append((str(task_id), str(completion), fut))
        if len(self._pending) >= self.max_items:
            self._flush()
        elif self._timer is None:
            self._timer = loop.call_later(self.window, self._flush)
        return await fut

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batch, self._pending = self._pending, []
        if batch:
            task = asyncio.ensure_future(self._send(batch))
            self._sending.add(task)  # keep a reference until it is done
            task.add_done_callback(self._sending.discard)

    async def _send(self, batch: List[Tuple[str, str, "asyncio.Future[ScoreResult]"]]) -> None:
        try:
            results = await asyncio.to_thread(self.env.score_detailed, [(t, c) for t, c, _ in batch])
        except Exception as e:  # noqa: BLE001 - every caller of the batch gets the error
            for _, _, fut in batch:
                if not fut.done():
                    fut.set_exception(e)
            return
        for (_, _, fut), r in zip(batch, results):
            if not fut.done():
                fut.set_result(r)
