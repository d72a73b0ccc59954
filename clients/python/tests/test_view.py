"""The compact view against a live `cogen serve --preset smoke`: the built-in solver's tokens as
text (docs/train-your-own-model.md, "The solver's view over HTTP"). A Hugging Face `tokenizers`
tokenizer loaded from GET /v1/tokenizer reads a served prompt as exactly the ids the server states,
and answers written in the view (taken from `cogen export --view compact` of the run) score 1."""

from __future__ import annotations

import json
import subprocess

import pytest
from tokenizers import Tokenizer

from cogen_client import Cogen, CogenError

from conftest import CLI, REPO_ROOT, node


def compact_answers(server, tmp_path):
    """task id -> its reference answer in the view (`<eos>` last), from the run store."""
    out = tmp_path / "compact.jsonl"
    args = ["export", "--run", server.run_id, "--runs-dir", str(server.runs_dir), "--view", "compact", "--out", str(out)]
    subprocess.run([node(), str(CLI), *args], cwd=REPO_ROOT, check=True, capture_output=True, timeout=120)
    return {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}


def test_the_tokenizer_reads_a_served_prompt_as_the_served_ids(env: Cogen):
    tok = Tokenizer.from_str(env.tokenizer_json())
    tasks = env.sample(6, view="compact")
    for t in tasks:
        assert isinstance(t.prompt, str) and t.prompt.split(" ")[-2] == "<sep>"
        assert t.prompt_ids[0] == 1 and t.prompt_ids[-2] == 2
        assert tok.encode(t.prompt).ids == t.prompt_ids
        # decode joins the tokens by one space: the view's own text
        assert tok.decode(t.prompt_ids, skip_special_tokens=False) == "<bos> " + t.prompt
    assert tok.token_to_id("␣") == 4 and tok.token_to_id("<eos>") == 3


def test_answers_written_in_the_view_score_as_their_text(server, env: Cogen, tmp_path):
    tok = Tokenizer.from_str(env.tokenizer_json())
    tasks = env.sample(4, view="compact")
    rows = compact_answers(server, tmp_path)
    completions = [rows[t.id]["completion"] for t in tasks]
    for c in completions:
        assert tok.encode(c, add_special_tokens=False).ids[-1] == 3  # <eos>
    results = env.score_detailed([(t.id, c) for t, c in zip(tasks, completions)], view="compact")
    assert [r.reward for r in results] == [1.0] * len(tasks)
    assert [r.answer for r in results] == [rows[t.id]["answer"] for t in tasks]
    # TRL passes the dataset's columns to the reward function: `view` says how completions are written
    assert env.trl_reward([t.prompt for t in tasks], completions, task_id=[t.id for t in tasks], view=["compact"] * len(tasks)) == [1.0] * len(tasks)
    verdict = env.verify(json.dumps({"type": "deduction", "program": "function f(a) { return a + 1; }", "input": [1], "output": 2}), "2 <eos>", view="compact")
    assert verdict.reward == 1.0


def test_a_completion_that_is_no_tokens_is_refused_in_one_line(env: Cogen):
    [t] = env.sample(1, view="compact")
    with pytest.raises(CogenError) as e:
        env.score([(t.id, "[1, 2]")], view="compact")
    assert e.value.status == 400
    assert "items.0.completion" in e.value.reason and "\n" not in e.value.reason
    with pytest.raises(ValueError):
        env.sample(1, view="pixels")


def test_probes_and_the_live_dataset_in_the_view(env: Cogen):
    p = env.probes(view="compact")
    assert p["tasks"] and all(isinstance(t.prompt, str) for t in p["tasks"])
    rows = iter(env.as_dataset(batch=2, view="compact"))
    row = next(rows)
    assert row["view"] == "compact" and row["prompt"].split(" ")[-2] == "<sep>"
    assert "view" not in next(iter(env.as_dataset(batch=1)))
