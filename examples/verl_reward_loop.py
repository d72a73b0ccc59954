"""veRL's asynchronous reward loop with rewards from cogen's verification workers (docs/scale-out.md).

veRL's experimental reward loop (verl/experimental/reward_loop) runs reward workers as Ray actors;
each asks its reward-loop manager for one sample's reward at a time with `await run_single(data)`,
all the samples of a batch concurrently. This manager sends those calls to `cogen serve` replicas
(started with `--verify nats://…`, so the answers are verified by `cogen worker`s): the calls that
arrive together become one `/v1/score` request (cogen_client.aio.AsyncBatchScorer, in a thread, so
the loop never blocks), with one idempotency key, failed over between replicas on a 503 or a
refused connection. The rows must be tasks sampled from the served run (`extra_info.task_id`),
so that the scores feed its curriculum.

Set up (one machine; see docs/scale-out.md for many):

    nats-server -js &
    cogen serve --store postgres://cogen@db/cogen --run-id team --verify nats://127.0.0.1:4222 --port 8787 &
    cogen serve --store postgres://cogen@db/cogen --run-id team --verify nats://127.0.0.1:4222 --port 8788 &
    cogen worker --nats nats://127.0.0.1:4222 --port 8790 &      # as many as you have cores for

Then point veRL's reward loop at this file (keys of verl's reward_model section, as its
reward_loop.py reads them):

    COGEN_URL=http://127.0.0.1:8787,http://127.0.0.1:8788 python -m verl.trainer.main_ppo ... \
      reward_model.reward_loop_source=importlib \
      reward_model.reward_loop_module_path=examples/verl_reward_loop.py \
      reward_model.reward_loop_class_name=CogenRewardLoopManager

Each reward comes back as `{"reward_score": r, "reward_extra_info": {"acc": r, "cogen_reason": …}}`,
the shape veRL's reward-loop managers return. Needs `pip install ./clients/python` and veRL
(this file imports it; nothing else of cogen does).
"""

from __future__ import annotations

import os
from typing import Any, Dict, Optional

from verl import DataProto
from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase

from cogen_client import AsyncBatchScorer, Cogen


class CogenRewardLoopManager(RewardManagerBase):
    """A reward-loop manager whose rewards are scored by a live cogen run (its replicas and workers)."""

    # One scorer per process: every manager instance of a reward worker shares its batching.
    _scorer: Optional[AsyncBatchScorer] = None

    def __init__(self, config, tokenizer, compute_score=None, reward_router_address=None, reward_model_tokenizer=None, **kwargs: Any):
        super().__init__(config, tokenizer)

    @classmethod
    def init_class(cls, config, tokenizer):
        super().init_class(config, tokenizer)
        if cls._scorer is None:
            # COGEN_URL: one replica, or several separated by commas; COGEN_TOKEN: the bearer token, if set.
            env = Cogen(os.environ.get("COGEN_URL", "http://127.0.0.1:8787"), timeout=120)
            cls._scorer = AsyncBatchScorer(env, window=0.01)

    async def run_single(self, data: DataProto) -> Dict[str, Any]:
        assert len(data) == 1, "a reward-loop manager scores one sample at a time"
        item = data[0]
        response_ids = item.batch["responses"]
        valid = int(item.batch["attention_mask"][-response_ids.shape[-1]:].sum())
        completion = await self.loop.run_in_executor(None, lambda: self.tokenizer.decode(response_ids[:valid], skip_special_tokens=True))
        extra = item.non_tensor_batch.get("extra_info", {}) or {}
        task_id = extra.get("task_id")
        if task_id is None:
            raise ValueError("cogen's reward loop needs extra_info['task_id']: rows sampled from the served run (cogen_client's LiveDataset)")
        result = await type(self)._scorer.score(str(task_id), completion)
        return {"reward_score": result.reward, "reward_extra_info": {"acc": result.reward, "cogen_reason": result.reason or ""}}
