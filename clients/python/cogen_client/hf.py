"""The live curriculum as a HuggingFace `datasets.IterableDataset` (`Cogen.as_hf_dataset`). It imports
`datasets` only when called, and nothing of client.py: the client imports it, not the other way round.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator


def task_row(t: Any, view: str = "chat") -> Dict[str, Any]:
    """A sampled task as a dataset row: its prompt, id, type, family and level (and its view, when not chat)."""
    row = {
        "prompt": t.prompt,
        "task_id": t.id,
        "type": t.type,
        "family": t.family,
        "level": t.level,
    }
    if view != "chat":  # the reward function reads it back (trl_reward); chat rows stay as they were
        row["view"] = view
    return row


def _live_rows(env: Any, batch: int, view: str = "chat", one_arm: bool = False) -> Iterator[Dict[str, Any]]:
    while True:
        for t in env.sample(batch, view, one_arm=one_arm):
            yield task_row(t, view)


def hf_dataset(env: Any, batch: int = 64, view: str = "chat", one_arm: bool = False):
    """An endless `datasets.IterableDataset` of fresh tasks: prompt (chat messages), task_id, type,
    family, level. Give GRPOTrainer `max_steps` (an endless stream has no epoch) and
    `shuffle_dataset=False` (a shuffle buffer would hold tasks back until they go stale).

    With view="compact" the prompt is the built-in solver's tokens as text (a standard, not
    conversational, prompt: load the tokenizer from `env.tokenizer_json()`), and a `view` column
    tells `env.trl_reward` that completions are written in it too.

    With one_arm=True each request's `batch` tasks share one arm. GRPOTrainer takes a step's
    prompts as consecutive rows of the stream, so with batch = its prompts per step (generation
    batch size / num_generations) every step trains on one arm."""
    from datasets import Features, IterableDataset, Value

    if view == "compact":
        columns = {"prompt": Value("string"), "task_id": Value("string"), "type": Value("string"), "family": Value("string"), "level": Value("int64"), "view": Value("string")}
        return IterableDataset.from_generator(_live_rows, features=Features(columns), gen_kwargs={"env": env, "batch": batch, "view": view, "one_arm": one_arm})

    try:  # datasets >= 4
        from datasets import List as _List

        prompt_feature = _List({"role": Value("string"), "content": Value("string")})
    except ImportError:  # pragma: no cover - older datasets
        prompt_feature = [{"role": Value("string"), "content": Value("string")}]
    features = Features(
        {
            "prompt": prompt_feature,
            "task_id": Value("string"),
            "type": Value("string"),
            "family": Value("string"),
            "level": Value("int64"),
        }
    )
    return IterableDataset.from_generator(_live_rows, features=features, gen_kwargs={"env": env, "batch": batch, "one_arm": one_arm})
