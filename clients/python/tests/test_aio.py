"""AsyncBatchScorer against a live `cogen serve`: concurrent coroutines' completions go as one score
request, each caller gets its own result, and a refused batch fails every caller with the reason."""

from __future__ import annotations

import asyncio
import re
import urllib.request

import pytest

from cogen_client import AsyncBatchScorer, Cogen, CogenError


def _score_requests(url: str) -> int:
    text = urllib.request.urlopen(url + "/metrics", timeout=30).read().decode()
    return sum(int(float(m)) for m in re.findall(r'^cogen_http_requests_total\{route="/v1/score",status="\d+"\} ([0-9.e+]+)$', text, re.M))


def test_concurrent_calls_go_as_one_request_and_each_gets_its_result(server, env, answers):
    tasks = env.sample(4)
    ref = answers([t.id for t in tasks])
    before_stats = env.stats()
    before = _score_requests(server.url)

    async def main():
        scorer = AsyncBatchScorer(Cogen(server.url), window=0.2)
        calls = [scorer.score(t.id, f"ANSWER: {ref[t.id]}" if k % 2 == 0 else 'ANSWER: "nope"') for t in tasks for k in range(4)]
        return await asyncio.gather(*calls)

    results = asyncio.run(main())
    assert [r.reward for r in results] == [1.0, 0.0, 1.0, 0.0] * 4
    assert [r.task_id for r in results] == [t.id for t in tasks for _ in range(4)]
    assert _score_requests(server.url) - before == 1
    after = env.stats()
    assert after["completions"] - before_stats["completions"] == 16
    assert after["groups"] - before_stats["groups"] == 4


def test_a_refused_batch_fails_every_caller(server):
    async def main():
        scorer = AsyncBatchScorer(Cogen(server.url), window=0.05)
        return await asyncio.gather(scorer.score("no-such-task", "1"), scorer.score("nor-this", "2"), return_exceptions=True)

    errors = asyncio.run(main())
    assert all(isinstance(e, CogenError) and e.status == 404 for e in errors)
    with pytest.raises(CogenError):
        raise errors[0]
