"""TRL for real: GRPOTrainer with cogen as dataset, reward and probe judge, on the tiny local model
of examples/trl_grpo.py. Needs torch, transformers and trl (not in CI's venv: torch is ~5 GB);
skipped without them."""

from __future__ import annotations

import importlib.util

import pytest

from conftest import REPO_ROOT, Server

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
trl = pytest.importorskip("trl")


def example():
    spec = importlib.util.spec_from_file_location("cogen_trl_example", REPO_ROOT / "examples" / "trl_grpo.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def fresh(tmp_path):
    s = Server(tmp_path / "runs", tmp_path, ["--preset", "smoke"], name="trl").start()
    yield s
    s.stop()


def test_probe_callback_answers_a_due_round_with_the_model(fresh):
    from cogen_client import Cogen
    from cogen_client.trl import CogenProbeCallback

    env = Cogen(fresh.url)
    probes = env.probes()
    model, tok = example().tiny_model_and_tokenizer([m["content"] for t in probes["tasks"] for m in t.messages])
    model.train()
    cb = CogenProbeCallback(env, tok, max_new_tokens=8, batch_size=4)
    res = cb.maybe_report(model)
    assert res is not None and res["accepted"] is True and res["round"] == probes["round"]
    assert model.training, "the callback puts the model back in training mode"
    assert env.stats()["probes_reported"] == probes["round"]
    assert cb.maybe_report(model) is None  # the round is answered; nothing is due until the next one
    # the trainer's hook: on_step_end with every=2 looks only at even steps
    cb2 = CogenProbeCallback(env, tok, every=2, max_new_tokens=8)

    class State:
        global_step = 1
        is_world_process_zero = True

    assert cb2.on_step_end(None, State(), "control", model=model) == "control"


def test_grpo_trainer_trains_on_the_live_curriculum(fresh, tmp_path):
    from trl import GRPOConfig, GRPOTrainer

    from cogen_client import Cogen
    from cogen_client.trl import CogenProbeCallback

    env = Cogen(fresh.url)
    model, tok = example().tiny_model_and_tokenizer([m["content"] for t in env.probes()["tasks"] for m in t.messages])
    args = GRPOConfig(
        output_dir=str(tmp_path / "out"), max_steps=2, per_device_train_batch_size=4, num_generations=4,
        max_completion_length=8, logging_steps=1, save_strategy="no", report_to=[], use_cpu=True,
        shuffle_dataset=False, beta=0.0,
    )
    cb = CogenProbeCallback(env, tok, max_new_tokens=8)
    trainer = GRPOTrainer(model=model, processing_class=tok, reward_funcs=[env.trl_reward], train_dataset=env.as_hf_dataset(batch=4), args=args, callbacks=[cb])
    trainer.train()
    stats = env.stats()
    assert stats["groups"] == 2  # one task x 4 completions per step: one group per step
    assert stats["completions"] == 8
    assert cb.history and cb.history[0]["accepted"] is True
    assert any("rewards/trl_reward/mean" in h for h in trainer.state.log_history)


def test_probe_generation_without_a_pad_token_leaves_the_tokenizer_as_it_was(fresh):
    from cogen_client import Cogen
    from cogen_client.trl import CogenProbeCallback

    env = Cogen(fresh.url)
    tasks = env.probes()["tasks"]
    model, tok = example().tiny_model_and_tokenizer([m["content"] for t in tasks for m in t.messages])
    tok.pad_token = None
    tok.chat_template = None  # no template: the contents joined
    side = tok.padding_side
    out = CogenProbeCallback(env, tok, max_new_tokens=4, batch_size=3).generate(model, tasks[:5])
    assert len(out) == 5 and all(isinstance(o, str) for o in out)
    assert tok.pad_token is None and tok.padding_side == side
