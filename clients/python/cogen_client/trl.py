"""TRL adapters: the live curriculum as a HuggingFace `IterableDataset` (hf.py), and a `TrainerCallback`
that answers cogen's mastery probes with the trainer's model (greedy) at the probe cadence.

The reward function itself is `Cogen.trl_reward` (no third-party import). This module imports
`datasets`, `transformers` and `torch` only when the adapters are used: `pip install cogen-client[trl]`.
"""

from __future__ import annotations

import logging
from typing import Any, Dict, List, Optional

from .client import Cogen, CogenError, Task
from .hf import hf_dataset  # noqa: F401  (the dataset adapter, kept importable from here)

logger = logging.getLogger("cogen_client")

try:  # the callback must subclass TrainerCallback for the Trainer; without transformers it is a plain class
    from transformers import TrainerCallback as _CallbackBase  # type: ignore
except ImportError:  # pragma: no cover - exercised only without transformers
    _CallbackBase = object  # type: ignore


def render_prompt(tokenizer: Any, messages: List[Dict[str, str]]) -> str:
    """The prompt text a model sees: the tokenizer's chat template when it has one, else the
    messages' contents joined by blank lines."""
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return "\n\n".join(str(m.get("content", "")) for m in messages) + "\n\n"


class CogenProbeCallback(_CallbackBase):  # type: ignore[misc, valid-type]
    """Answers cogen's mastery probes with the model being trained.

    At the end of a step (every `every` steps, or every step when None) it asks the server for the
    probe round; when the round is due and not answered yet, it generates one greedy answer per
    probe task with the trainer's model, on the model's device, and reports them. The server turns
    them into learned / forgotten events of *this* model. Only the main process answers.

        trainer = GRPOTrainer(..., callbacks=[CogenProbeCallback(env, tokenizer)])

    With view="compact" the probes come in the built-in solver's view and the answers go back in it:
    the prompt is tokenized as it is (the tokenizer of `env.tokenizer_json()` prepends `<bos>`),
    and the answer decoded with its specials, the server reading it up to `<eos>`.
    """

    def __init__(
        self,
        env: Cogen,
        tokenizer: Any,
        every: Optional[int] = None,
        max_new_tokens: int = 256,
        batch_size: int = 8,
        view: str = "chat",
    ):
        self.env = env
        self.view = view
        self.tokenizer = tokenizer
        self.every = every
        self.max_new_tokens = max_new_tokens
        self.batch_size = batch_size
        self.reported: set = set()
        #: The server's answers to our reports, newest last ({"round", "accuracy", "per_skill", ...}).
        self.history: List[Dict[str, Any]] = []

    # TrainerCallback's other events are inherited no-ops.
    def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any):
        if self.every and state.global_step % self.every != 0:
            return control
        if not getattr(state, "is_world_process_zero", True) or model is None:
            return control
        try:
            self.maybe_report(model)
        except CogenError as e:  # evaluation must not stop training: the next due round is tried again
            logger.warning("cogen probes skipped at step %s: %s", getattr(state, "global_step", "?"), e)
        return control

    def maybe_report(self, model: Any) -> Optional[Dict[str, Any]]:
        """Answers the current probe round if it is due and not answered yet; returns the server's
        result, or None when there was nothing to do."""
        p = self.env.probes(self.view)
        rnd = p.get("round")
        due = p.get("due")
        if due is None:
            due = rnd not in self.reported
        tasks: List[Task] = p.get("tasks", [])
        if not due or rnd in self.reported or not tasks:
            return None
        completions = self.generate(model, tasks)
        result = self.env.report_probes(rnd, [(t.id, c) for t, c in zip(tasks, completions)], self.view)
        self.reported.add(rnd)
        self.history.append(result)
        logger.info("cogen probes round %s: accuracy %s", rnd, result.get("accuracy"))
        return result

    def generate(self, model: Any, tasks: List[Task]) -> List[str]:
        """Greedy completions of the probe prompts with `model`, on its device."""
        import torch

        tok = self.tokenizer
        device = getattr(model, "device", None)
        if device is None:
            device = next(model.parameters()).device
        compact = self.view == "compact"
        chat = bool(getattr(tok, "chat_template", None)) and not compact
        texts = [str(t.prompt) if compact else render_prompt(tok, t.messages) for t in tasks]
        # In the compact view the specials stay, with the spaces between tokens as they are: the server reads up to <eos>.
        decode = {"skip_special_tokens": False, "clean_up_tokenization_spaces": False} if compact else {"skip_special_tokens": True}
        pad_id = tok.pad_token_id if tok.pad_token_id is not None else getattr(tok, "eos_token_id", None)
        # Batches need a pad token (left padding, for a decoder-only model); without one, one by one.
        size = self.batch_size if pad_id is not None else 1
        was_training = model.training
        old_side = getattr(tok, "padding_side", "right")
        old_pad = tok.pad_token
        outputs: List[str] = []
        model.eval()
        try:
            tok.padding_side = "left"
            for i in range(0, len(texts), size):
                chunk = texts[i : i + size]
                if len(chunk) > 1 and tok.pad_token is None:
                    tok.pad_token = tok.eos_token
                enc = tok(chunk, return_tensors="pt", padding=len(chunk) > 1, add_special_tokens=not chat)
                enc = {k: v.to(device) for k, v in enc.items()}
                with torch.no_grad():
                    out = model.generate(
                        **enc,
                        max_new_tokens=self.max_new_tokens,
                        do_sample=False,
                        pad_token_id=pad_id,
                    )
                new = out[:, enc["input_ids"].shape[1] :]
                outputs.extend(tok.batch_decode(new, **decode))
        finally:
            tok.padding_side = old_side
            if tok.pad_token != old_pad:
                tok.pad_token = old_pad
            if was_training:
                model.train()
        return outputs
