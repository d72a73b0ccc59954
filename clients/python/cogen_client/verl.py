"""veRL adapter: a `compute_score` for veRL's `custom_reward_function`.

    custom_reward_function.path=<site-packages>/cogen_client/verl.py
    custom_reward_function.name=compute_score

The server is `COGEN_URL` (default http://127.0.0.1:8787; several replicas of one run separated by
commas, tried in turn), with `COGEN_TOKEN` as its bearer token.

- A row of `cogen export --format parquet` carries the whole task in `extra_info["task"]` (a JSON
  string, or a dict): it is verified statelessly (POST /v1/verify); nothing is recorded in a run.
- A row sampled from the live curriculum carries `extra_info["task_id"]`: it is scored in the served
  run (POST /v1/score), so the curriculum follows the model.

This file imports nothing from veRL (veRL loads it by path); `compute_score_batch` is the same for
veRL's batch reward manager.
"""

from __future__ import annotations

import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Optional, Sequence

try:
    from cogen_client.client import DEFAULT_URL, Cogen
except ImportError:  # pragma: no cover - loaded by path next to client.py without the package installed
    import importlib.util
    import sys

    _spec = importlib.util.spec_from_file_location("cogen_client_client", os.path.join(os.path.dirname(__file__), "client.py"))
    _mod = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
    sys.modules["cogen_client_client"] = _mod
    _spec.loader.exec_module(_mod)  # type: ignore[union-attr]
    DEFAULT_URL, Cogen = _mod.DEFAULT_URL, _mod.Cogen

_clients: Dict[str, Cogen] = {}
_lock = threading.Lock()


def _env() -> Cogen:
    url = os.environ.get("COGEN_URL") or DEFAULT_URL
    with _lock:
        env = _clients.get(url)
        if env is None:
            env = _clients[url] = Cogen(url)
        return env


def _extra(extra_info: Any) -> Dict[str, Any]:
    if extra_info is None:
        return {}
    if isinstance(extra_info, str):
        extra_info = json.loads(extra_info)
    if hasattr(extra_info, "items"):
        return dict(extra_info.items())
    return {}


def compute_score(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: Optional[Dict[str, Any]] = None,
    **kwargs: Any,
) -> float:
    """The reward in [0, 1] of one completion, verified by cogen's sandbox."""
    info = _extra(extra_info)
    env = _env()
    task = info.get("task")
    if task is not None:
        if isinstance(task, (bytes, bytearray)):
            task = task.decode("utf-8")
        if isinstance(task, str):
            task = json.loads(task)
        return env.verify(task, solution_str).reward
    task_id = info.get("task_id")
    if task_id is not None:
        return env.score([(str(task_id), solution_str)])[0]
    raise ValueError(
        "cogen compute_score needs extra_info['task'] (a row of `cogen export --format parquet`) "
        "or extra_info['task_id'] (a task sampled from `cogen serve`)"
    )


def compute_score_batch(
    data_sources: Sequence[Any],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Optional[Dict[str, Any]]],
    **kwargs: Any,
) -> List[float]:
    """veRL's batch reward manager signature. Rows with a `task_id` are scored in one request (the
    completions of one task form one group); exported rows are verified in parallel."""
    n = len(solution_strs)
    rewards: List[Optional[float]] = [None] * n
    infos = [_extra(x) for x in extra_infos]
    live = [i for i in range(n) if infos[i].get("task") is None and infos[i].get("task_id") is not None]
    env = _env()
    if live:
        scored = env.score([(str(infos[i]["task_id"]), solution_strs[i]) for i in live])
        for i, r in zip(live, scored):
            rewards[i] = r
    rest = [i for i in range(n) if rewards[i] is None]
    if rest:
        with ThreadPoolExecutor(max_workers=min(8, len(rest))) as pool:
            done = pool.map(
                lambda i: compute_score(data_sources[i], solution_strs[i], ground_truths[i], infos[i]), rest
            )
            for i, r in zip(rest, done):
                rewards[i] = r
    return [float(r) for r in rewards]  # type: ignore[arg-type]
