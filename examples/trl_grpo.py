"""TRL's GRPOTrainer against a live `cogen serve`: cogen is the dataset (fresh tasks from the live
curriculum), the reward (verified in cogen's sandbox) and the judge of mastery (probe callback).

Opt-in, not run in CI. It trains a tiny causal LM built here from a config (no model hub needed),
on CPU, for a few steps: it shows the wiring, it does not learn anything useful in 5 steps.

    # run with (tested with these versions):
    #   pip install "./clients/python[trl]" trl==1.16.0 transformers==5.23.0 datasets==5.2.0 tokenizers==0.23.3 torch
    npx cogen serve --preset smoke                 # in another terminal (or pass --spawn below)
    python examples/trl_grpo.py --url http://127.0.0.1:8787 --steps 5
    python examples/trl_grpo.py --spawn            # starts and stops its own `cogen serve --preset smoke`

For a real model, replace `tiny_model_and_tokenizer()` with `AutoModelForCausalLM.from_pretrained(...)`
and `AutoTokenizer.from_pretrained(...)`; everything else stays.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "clients" / "python"))  # run from a checkout without installing the client

from cogen_client import Cogen  # noqa: E402
from cogen_client.trl import CogenProbeCallback  # noqa: E402

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def tiny_model_and_tokenizer(corpus: list[str]):
    """A 2-layer GPT-2 (64-wide) and a byte-level BPE tokenizer trained here on `corpus`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    specials = ["<|endoftext|>", "<|pad|>"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1024, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", bos_token="<|endoftext|>", pad_token="<|pad|>")
    tokenizer.chat_template = CHAT_TEMPLATE
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=4096,
        n_embd=64,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return GPT2LMHeadModel(config), tokenizer


def spawn_server(runs_dir: str):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        ["node", str(ROOT / "bin" / "cogen.js"), "serve", "--preset", "smoke", "--port", str(port), "--runs-dir", runs_dir],
        cwd=ROOT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"cogen serve exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/health", timeout=5):
                return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit("cogen serve was not healthy after 180 s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default=os.environ.get("COGEN_URL", "http://127.0.0.1:8787"))
    ap.add_argument("--spawn", action="store_true", help="start `cogen serve --preset smoke` on a free port (from this checkout) and stop it at the end")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--out", default=None, help="trainer output dir (default: a temp dir)")
    args = ap.parse_args()

    import torch
    from trl import GRPOConfig, GRPOTrainer

    proc = None
    tmp = tempfile.mkdtemp(prefix="cogen-trl-")
    if args.spawn:
        proc, args.url = spawn_server(os.path.join(tmp, "runs"))
    try:
        env = Cogen(args.url)
        print(f"cogen: {env.health()}", flush=True)
        torch.manual_seed(0)
        # The tokenizer learns its merges from the probe prompts (reading them consumes no task).
        probe_texts = [m["content"] for t in env.probes()["tasks"] for m in t.messages]
        corpus = probe_texts + ["ANSWER: 0", "ANSWER: true", "ANSWER: false", "```json\n[1, 2, 3]\n```", "0123456789 -+*/%()[]{}"]
        model, tokenizer = tiny_model_and_tokenizer(corpus)
        print(f"model: {sum(p.numel() for p in model.parameters())} parameters, vocab {len(tokenizer)}", flush=True)

        config = GRPOConfig(
            output_dir=args.out or os.path.join(tmp, "out"),
            max_steps=args.steps,  # an endless dataset has no epoch
            per_device_train_batch_size=8,
            num_generations=4,  # 2 tasks x 4 completions per step: one scored group per task
            max_completion_length=16,
            learning_rate=1e-4,
            beta=0.0,
            logging_steps=1,
            save_strategy="no",
            report_to=[],
            use_cpu=True,
            bf16=False,
            shuffle_dataset=False,  # a shuffle buffer would hold sampled tasks back until they go stale
            temperature=1.0,
        )
        trainer = GRPOTrainer(
            model=model,
            processing_class=tokenizer,
            reward_funcs=[env.trl_reward],
            train_dataset=env.as_hf_dataset(batch=8),
            args=config,
            callbacks=[CogenProbeCallback(env, tokenizer, max_new_tokens=16)],
        )
        trainer.train()
        probes = next(cb for cb in trainer.callback_handler.callbacks if isinstance(cb, CogenProbeCallback))
        print(f"cogen stats: {env.stats()}", flush=True)
        print(f"probe rounds answered by the model: {[(h.get('round'), h.get('accuracy')) for h in probes.history]}", flush=True)
        rewards = [h.get("rewards/trl_reward/mean") for h in trainer.state.log_history if "rewards/trl_reward/mean" in h]
        print(f"mean reward per step: {rewards}", flush=True)
        runs = f" --runs-dir {os.path.join(tmp, 'runs')}" if args.spawn else ""
        print(f"what this model mastered and forgot: cogen skills --run {env.health()['run_id']}{runs}", flush=True)
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


if __name__ == "__main__":
    main()
