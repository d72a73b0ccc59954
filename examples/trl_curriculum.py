"""A small PyTorch model learns on cogen's live curriculum with TRL: cogen is the dataset, the reward
and the judge of mastery; the model sees tasks as cogen's built-in solver does (the compact view,
docs/train-your-own-model.md).

Opt-in, CPU, not run in CI (torch is several GB). `npm run bench:served-learn` drives it on seeds
drawn at random and reports what the served run recorded. By hand:

    # pip install "./clients/python[trl]" trl==1.16.0 transformers==5.23.0 datasets==5.2.0 tokenizers torch
    npx cogen serve --preset default --seed 7 --run-id mine            # in another terminal
    npx cogen run --preset default --seed 8 --steps 30 --run-id source  # another run: its tasks warm-start the model
    npx cogen export --run source --view compact --exclude-probes mine --out warm.jsonl
    python examples/trl_curriculum.py --url http://127.0.0.1:8787 --warm warm.jsonl --out out/
    npx cogen skills --run mine                                         # what the model mastered and forgot

1. The tokenizer is cogen's (GET /v1/tokenizer); the model a GPT-2 config built here (no model hub).
2. Optionally, SFTTrainer warm-starts it on level-0 tasks of *another* run (`--warm`, exported with
   the served run's probes excluded by id). The served run's first probe round records what the
   warm start already knows.
3. GRPOTrainer trains it on the served run's live tasks, cogen scoring every completion, and
   CogenProbeCallback answers the probe rounds with the model: the served run turns them into
   learned and forgotten events of this model. Each step's tasks come from one arm, which the
   curriculum picks (`one_arm`): GRPO steps that mixed arithmetic's groups with logic's, nearly all
   solved, stopped learning arithmetic (bench/results/served-learn-2026-12-05.md); `--mix-arms`
   mixes them again.

A checkpoint is saved every --save-steps; `--resume` goes on from the newest in --out (with
`ignore_data_skip`: the HF Trainer would otherwise draw and throw away live batches to skip them).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "clients" / "python"))  # run from a checkout without installing the client

from cogen_client import Cogen  # noqa: E402
from cogen_client.trl import CogenProbeCallback  # noqa: E402

VIEW = "compact"


def cogen_tokenizer(env: Cogen):
    """cogen's vocabulary as a transformers tokenizer: <bos> prepended, tokens split on spaces."""
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(env.tokenizer_json()),
        bos_token="<bos>",
        eos_token="<eos>",
        pad_token="<pad>",
        unk_token="?",
        additional_special_tokens=["<sep>"],
        clean_up_tokenization_spaces=False,  # it would glue "1 ," into "1,", which is no token
    )


def small_gpt2(vocab: int, d: int, layers: int, heads: int):
    """A GPT-2 whose positions follow the attention mask: GRPOTrainer left-pads prompts, and in its
    training forward (no position_ids given) GPT-2 would count positions from the padding, so that a
    prompt's tokens would sit elsewhere than when it generated them."""
    from transformers import GPT2Config, GPT2LMHeadModel

    class MaskPositionsGPT2(GPT2LMHeadModel):
        def forward(self, input_ids=None, attention_mask=None, position_ids=None, **kwargs):
            if position_ids is None and attention_mask is not None and input_ids is not None:
                position_ids = (attention_mask.long().cumsum(-1) - 1).clamp(min=0)[:, -input_ids.shape[1] :]
            return super().forward(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, **kwargs)

    config = GPT2Config(
        vocab_size=vocab, n_positions=256, n_embd=d, n_layer=layers, n_head=heads,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,  # a small model on exact tasks: no dropout
        bos_token_id=1, eos_token_id=3, pad_token_id=0,
    )
    return MaskPositionsGPT2(config)


def warm_rows(path: str, level: int) -> list:
    """The warm-start pairs: the export's compact rows at `level`. The view joins tokens by one
    space, and SFTTrainer joins prompt and completion as text, so the completion starts with one."""
    rows = [json.loads(line) for line in open(path) if line.strip()]
    return [{"prompt": r["prompt"], "completion": " " + r["completion"]} for r in rows if r.get("level") == level]


def warm_start(model, tok, rows: list, args) -> dict:
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    config = SFTConfig(
        output_dir=str(Path(args.out) / "sft"), max_steps=args.sft_steps, per_device_train_batch_size=64,
        learning_rate=args.sft_lr, weight_decay=0.1, adam_beta2=0.99, lr_scheduler_type="constant_with_warmup",
        warmup_steps=20, logging_steps=100, save_strategy="no", report_to=[], use_cpu=True, bf16=False,
        disable_tqdm=True, seed=args.seed,
    )
    t0 = time.time()
    SFTTrainer(model=model, processing_class=tok, train_dataset=Dataset.from_list(rows), args=config).train()
    return {"rows": len(rows), "steps": args.sft_steps, "lr": args.sft_lr, "seconds": round(time.time() - t0, 1)}


def grpo_config(args):
    from trl import GRPOConfig

    return GRPOConfig(
        output_dir=str(Path(args.out) / "grpo"), max_steps=args.steps, seed=args.seed,
        per_device_train_batch_size=args.tasks * args.generations, num_generations=args.generations,
        max_completion_length=args.max_answer_tokens, temperature=args.temperature,
        learning_rate=args.lr, beta=args.beta, loss_type=args.loss_type, scale_rewards=args.scale_rewards,
        lr_scheduler_type="constant_with_warmup", warmup_steps=10, adam_beta2=0.99,
        logging_steps=10, report_to=[], use_cpu=True, bf16=False, disable_tqdm=True,
        save_strategy="steps", save_steps=args.save_steps, save_total_limit=2,
        shuffle_dataset=False,  # a shuffle buffer would hold live tasks back until they go stale
        ignore_data_skip=True,  # on resume, do not draw and throw away live batches
    )


def time_limit(minutes: float):
    """A callback that stops training (saving a checkpoint) once `minutes` of wall time have passed."""
    from transformers import TrainerCallback

    class TimeLimit(TrainerCallback):
        def __init__(self):
            self.deadline = time.monotonic() + minutes * 60

        def on_step_end(self, args, state, control, **kwargs):
            if time.monotonic() > self.deadline:
                control.should_training_stop = control.should_save = True
            return control

    return TimeLimit()


def logged_reward(env: Cogen, path: str):
    """cogen's reward (as `env.trl_reward` in the compact view) that appends each request the server
    acknowledged to `path`, one JSON line (idempotency key; task id and reward per completion),
    written through to disk before TRL sees the rewards: bench/served-restart.ts checks the run's
    store against it after crashes."""
    log = open(path, "a", encoding="utf-8")

    def cogen_reward(prompts, completions, task_id, **kwargs):
        results = env.score_detailed(list(zip(task_id, completions)), view=VIEW)
        log.write(json.dumps({"key": results.idempotency_key, "items": [[r.task_id, r.reward] for r in results]}) + "\n")
        log.flush()
        os.fsync(log.fileno())
        return [r.reward for r in results]

    return cogen_reward


def newest_checkpoint(out: Path):
    found = sorted((out / "grpo").glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))
    return str(found[-1]) if found else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default="http://127.0.0.1:8787")
    ap.add_argument("--out", required=True, help="checkpoints and summary.json go here")
    ap.add_argument("--warm", help="compact-view JSONL of another run's tasks (cogen export --view compact)")
    ap.add_argument("--warm-level", type=int, default=0)
    ap.add_argument("--sft-steps", type=int, default=600)
    ap.add_argument("--sft-lr", type=float, default=3e-3)
    ap.add_argument("--steps", type=int, default=20000, help="GRPO steps at most")
    ap.add_argument("--minutes", type=float, default=0, help="stop GRPO after this many minutes of wall time (0: no limit)")
    ap.add_argument("--tasks", type=int, default=32, help="tasks a GRPO step")
    ap.add_argument("--mix-arms", action="store_true", help="a step's tasks from any arms (default: one arm a step)")
    ap.add_argument("--generations", type=int, default=8, help="completions a task (num_generations)")
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--beta", type=float, default=0.0)
    ap.add_argument("--loss-type", default="dapo")
    ap.add_argument("--scale-rewards", default="group")
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--max-answer-tokens", type=int, default=8)
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--save-steps", type=int, default=100)
    ap.add_argument("--probe-every", type=int, default=5, help="answer the due probe round every this many steps (the served run opens one every probes.every groups)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--resume", action="store_true", help="go on from the newest checkpoint in --out")
    ap.add_argument("--ack-log", help="append each score request the server acknowledged to this JSONL file")
    args = ap.parse_args()

    import torch
    from trl import GRPOTrainer

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env = Cogen(args.url)
    health = env.health()
    tok = cogen_tokenizer(env)
    model = small_gpt2(len(tok), args.d, args.layers, args.heads)
    summary = {"run_id": health.get("run_id"), "args": vars(args), "parameters": sum(p.numel() for p in model.parameters())}
    resume_from = newest_checkpoint(out) if args.resume else None
    if args.resume and resume_from is None:
        raise SystemExit(f"--resume: no checkpoint under {out / 'grpo'}")
    if args.warm and not resume_from:
        rows = warm_rows(args.warm, args.warm_level)
        if not rows:
            raise SystemExit(f"--warm {args.warm}: no compact rows at level {args.warm_level}")
        summary["warm_start"] = warm_start(model, tok, rows, args) | {"source": args.warm, "level": args.warm_level}
    print(f"model: {summary['parameters']} parameters; served run {summary['run_id']}", flush=True)

    probes = CogenProbeCallback(env, tok, every=args.probe_every, max_new_tokens=args.max_answer_tokens, batch_size=64, view=VIEW)
    if not resume_from:
        probes.maybe_report(model)  # the first round: what the model knows before GRPO
    config = grpo_config(args)
    summary["grpo_config"] = {k: getattr(config, k) for k in ("loss_type", "beta", "num_generations", "scale_rewards", "learning_rate", "temperature", "per_device_train_batch_size", "max_completion_length")}
    summary["grpo_config"]["one_arm_a_step"] = not args.mix_arms
    trainer = GRPOTrainer(
        model=model, processing_class=tok, reward_funcs=[logged_reward(env, args.ack_log) if args.ack_log else env.trl_reward],
        train_dataset=env.as_hf_dataset(batch=args.tasks, view=VIEW, one_arm=not args.mix_arms), args=config,
        callbacks=[probes] + ([time_limit(args.minutes)] if args.minutes else []),
    )
    t0 = time.time()
    trainer.train(resume_from_checkpoint=resume_from)
    summary["grpo_seconds"] = round(time.time() - t0, 1)
    summary["grpo_steps"] = trainer.state.global_step
    summary["rewards"] = [[h["step"], h["reward"]] for h in trainer.state.log_history if "reward" in h]
    summary["probe_rounds"] = probes.history
    summary["stats"] = env.stats()
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    print(f"done: {trainer.state.global_step} GRPO steps in {summary['grpo_seconds']} s; cogen skills --run {summary['run_id']}", flush=True)


if __name__ == "__main__":
    main()
