"""cogen_client: train your own model against a live `cogen serve`.

    from cogen_client import Cogen
    env = Cogen("http://127.0.0.1:8787")
    tasks = env.sample(64)
    rewards = env.score([(t.id, completion) for t, completion in zip(tasks, completions)])

The core uses the standard library only. The adapters import their libraries when used:
`cogen_client.trl` (datasets, transformers, torch) and `cogen_client.verl` (none at all);
`cogen_client.aio.AsyncBatchScorer` scores from asyncio code (veRL's reward loop).
"""

from .aio import AsyncBatchScorer
from .client import DEFAULT_URL, Cogen, CogenError, LiveDataset, ScoreResult, ScoreResults, Task, completion_text

__all__ = [
    "AsyncBatchScorer",
    "DEFAULT_URL",
    "Cogen",
    "CogenError",
    "CogenProbeCallback",
    "LiveDataset",
    "ScoreResult",
    "ScoreResults",
    "Task",
    "completion_text",
]
__version__ = "0.1.0"


def __getattr__(name: str):
    if name == "CogenProbeCallback":  # imports transformers when asked for, not before
        from .trl import CogenProbeCallback

        return CogenProbeCallback
    raise AttributeError(f"module 'cogen_client' has no attribute {name!r}")
