"""bench:ceiling's peer: a plain PyTorch nanoGPT trained with cross-entropy on the same split as cogen's
solver, in the same tokens, with the same model, positions, optimiser, schedule and batches.

The model is the solver's (src/solver/model.ts): pre-LN GPT-2 blocks, tied head, learned positions
counted from <bos> (prompt token i at i), answer input k at max_prompt + 1 + k, and <sep>'s embedding
added to the prompt's last token. AdamW decays matrices and embeddings, not biases and LayerNorm
gains; warm-up then cosine to min_lr_ratio; global-norm clip. Unlike the solver it decodes with no
answer grammar, and its loss is the plain softmax over the whole vocabulary, with one exception: a
working (src/solver/work-grammar.ts), whose template's text it copies and whose holes it writes as
typed literals (an int: a sign, two digits or more, no leading 0 past the pad; a bool: true or
false), and whose loss counts the tokens the solver chooses (the job's `free` flags).

Reads a job (JSON) from the file named by argv[1]; prints one JSON line per evaluation with its
answers as text (the job's token texts joined), which bench/ceiling.ts reads back from the view
(src/solver/answer-view.ts: `+07` is 7) and verifies as it does the solver's, so that a right answer
written in other tokens still counts:
  {"step", "heldOut": [...], "train": [...], "sampledHeldOut": [...], "seconds"}
With "serve" in the job (bench/agentic-clone.ts), after each evaluation it decodes what the bench sends
on stdin, one JSON line each ({"prompts": [[ids]], "sample": bool}, answered with {"answers": [...]};
or {"next": [[prompt ids, answer ids so far]]}, answered with each row's next-token log-probs, for a
bench that masks and picks the tokens itself), until {"resume": true}: the bench plays environments
with the peer's actions between its steps.
Needs torch (bench/torch-venv.ts makes the venv; not CI).
"""
import json
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

BOS, SEP, EOS = 1, 2, 3
job = json.load(open(sys.argv[1]))
m = job["model"]
V, D, L, H = job["vocab"], m["dModel"], m["layers"], m["heads"]
P, A = m["maxPromptLen"], m["maxAnswerLen"]
torch.manual_seed(job.get("initSeed", job["seed"]))
torch.set_num_threads(job.get("threads", 1))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.c_attn, self.c_proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.c_fc, self.mlp_proj = nn.Linear(D, m["mlpRatio"] * D), nn.Linear(m["mlpRatio"] * D, D)

    def forward(self, x, mask):
        n, t, _ = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(D, dim=2)
        q, k, v = (z.view(n, t, H, D // H).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.c_proj(y.transpose(1, 2).reshape(n, t, D))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(V, D), nn.Embedding(P + 1 + A, D)
        self.h = nn.ModuleList(Block() for _ in range(L))
        self.ln_f = nn.LayerNorm(D)
        for name, p in self.named_parameters():  # nanoGPT's init, as initWeights in model.ts
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif p.dim() == 2:
                std = 0.02 / math.sqrt(2 * L) if name.endswith("c_proj.weight") or name.endswith("mlp_proj.weight") else 0.02
                nn.init.normal_(p, 0, std)

    def forward(self, idx, pos, last, keep):
        """idx, pos: [n, t]; last: [n] column of each prompt's last token; keep: [n, t, t] attention allowed."""
        x = self.wte(idx) + self.wpe(pos)
        x[torch.arange(len(idx)), last] += self.wte.weight[SEP]
        mask = keep[:, None]
        for b in self.h:
            x = b(x, mask)
        return self.ln_f(x) @ self.wte.weight.T


def rows(prompts, answers):
    """Left-padded sequences <bos> prompt answer-inputs, their positions, last-prompt columns and masks."""
    tp = max(len(p) for p in prompts) + 1
    ta = max((len(a) for a in answers), default=0)
    n, t = len(prompts), tp + ta
    idx = torch.zeros(n, t, dtype=torch.long)
    pos = torch.zeros(n, t, dtype=torch.long)
    keep = torch.zeros(n, t, t, dtype=torch.bool)
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    for r, p in enumerate(prompts):
        pad = tp - 1 - len(p)
        idx[r, pad:tp] = torch.tensor([BOS] + p)
        pos[r, pad:tp] = torch.arange(len(p) + 1)
        a = answers[r]
        idx[r, tp:tp + len(a)] = torch.tensor(a, dtype=torch.long)
        pos[r, tp:] = torch.arange(P + 1, P + 1 + ta)
        keep[r] = causal.clone()
        keep[r, :, :pad] = False
        keep[r, torch.arange(t), torch.arange(t)] = True  # a pad row attends to itself (unused)
    return idx, pos, torch.full((n,), tp - 1), keep


def step_loss(model, prompts, answers, free):
    """Mean cross-entropy of the answers' tokens (<eos> included; only the free ones where flags are given), over the batch's tokens."""
    inputs = [a[:-1] for a in answers]
    idx, pos, last, keep = rows(prompts, inputs)
    logits = model(idx, pos, last, keep)
    tp = idx.shape[1] - max(len(a) for a in inputs)
    tgt = torch.full(idx.shape, -100, dtype=torch.long)
    for r, a in enumerate(answers):
        tgt[r, tp - 1:tp - 1 + len(a)] = torch.tensor([t if f else -100 for t, f in zip(a, free[r])] if free else a)
    return F.cross_entropy(logits.reshape(-1, V), tgt.reshape(-1), ignore_index=-100)


TOK = job["tokens"]
SIGNS = [TOK.index("+"), TOK.index("-")]
DIGITS = [TOK.index(str(d)) for d in range(10)]
BOOLS = [TOK.index("true"), TOK.index("false")]


class Template:
    """A working's template as the solver's grammar walks it: text parts copied token for token, holes typed literals."""

    def __init__(self, parts):
        self.parts, self.part, self.k, self.hole = parts, 0, 0, []

    def allowed(self):
        if self.part == len(self.parts):
            return [EOS]
        p = self.parts[self.part]
        if "text" in p:
            return [p["text"][self.k]]
        if p["hole"] == "bool":
            return BOOLS
        h = self.hole
        if len(h) == 0:
            return SIGNS
        if len(h) < 3:  # the first and second digit
            return DIGITS
        end = self.parts[self.part + 1]["text"][0] if self.part + 1 < len(self.parts) else EOS
        return [end] if h[1] == DIGITS[0] else DIGITS + [end]

    def step(self, tok):
        p = self.parts[self.part] if self.part < len(self.parts) else None
        if p is None:
            return
        if "text" in p:
            self.k += 1
            if self.k == len(p["text"]):
                self.part, self.k = self.part + 1, 0
        elif p["hole"] == "bool":
            self.part, self.k = self.part + 1, 0
        elif tok in DIGITS or tok in SIGNS and not self.hole:
            self.hole.append(tok)
        else:  # the terminator: the next text's first token, or <eos>
            self.part, self.k, self.hole = self.part + 1, 0, []
            if self.part < len(self.parts):
                self.step(tok)


def next_logits(model, prompts, out):
    """The logits of each row's next answer token after its prompt and the answer tokens so far."""
    idx, pos, last, keep = rows(prompts, out)
    logits = model(idx, pos, last, keep)
    col = [idx.shape[1] - max(len(o) for o in out) - 1 + len(o) for o in out]
    return logits[torch.arange(len(prompts)), torch.tensor(col)]


@torch.no_grad()
def decode(model, prompts, sample, gen, templates):
    """Greedy (or sampled at temperature 1) answers, token ids without <eos>; a working's under its template."""
    out = [[] for _ in prompts]
    done = [False] * len(prompts)
    walks = [Template(t) if t else None for t in templates]
    for _ in range(A + 1):
        nxt = next_logits(model, prompts, out)
        for r, w in enumerate(walks):
            if w and not done[r]:
                mask = torch.full((V,), float("-inf"))
                mask[w.allowed()] = 0
                nxt[r] += mask
        tok = torch.multinomial(F.softmax(nxt, -1), 1, generator=gen)[:, 0] if sample else nxt.argmax(-1)
        for r, t in enumerate(tok.tolist()):
            if done[r]:
                continue
            if t == EOS or len(out[r]) >= A:
                done[r] = True
            else:
                out[r].append(t)
                if walks[r]:
                    walks[r].step(t)
        if all(done):
            break
    return out


def answers(model, split, sample=False, gen=None):
    got = []
    templates = split.get("templates") or [None] * len(split["prompts"])
    for i in range(0, len(split["prompts"]), 256):
        got += decode(model, split["prompts"][i:i + 256], sample, gen, templates[i:i + 256])
    return ["".join(job["tokens"][t] for t in ids) for ids in got]


model = GPT()
o = job["optim"]
decay = [p for n, p in model.named_parameters() if p.dim() == 2]
rest = [p for n, p in model.named_parameters() if p.dim() != 2]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": o["weightDecay"]}, {"params": rest, "weight_decay": 0.0}],
                        lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"])
steps = job["steps"]


def serve(model, gen):
    """Decodes the bench's requests, one line each, until it says to go on training."""
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("resume"):
            return
        if "next" in req:  # the bench masks and picks each token itself (its action grammar)
            with torch.no_grad():
                lp = F.log_softmax(next_logits(model, [r[0] for r in req["next"]], [r[1] for r in req["next"]]), -1)
            print(json.dumps({"logprobs": [[round(x, 4) for x in row] for row in lp.tolist()]}), flush=True)
            continue
        print(json.dumps({"answers": answers(model, {"prompts": req["prompts"]}, req.get("sample", False), gen)}), flush=True)


def lr_at(step):
    """The solver's schedule (optim.ts learningRate): linear warm-up, then cosine to lr * minLrRatio."""
    if step < o["warmupSteps"]:
        return o["lr"] * (step + 1) / o["warmupSteps"]
    t = (step - o["warmupSteps"]) / max(1, steps - o["warmupSteps"])
    return o["lr"] * (o["minLrRatio"] + (1 - o["minLrRatio"]) * 0.5 * (1 + math.cos(math.pi * min(1, t))))


train, held = job["train"], job["heldOut"]
probe = {k: train[k][:job["trainEval"]] for k in ("prompts", "answers", "templates") if k in train}
gen = torch.Generator().manual_seed(job["seed"])
started = time.time()
for step in range(1, steps + 1):
    for g in opt.param_groups:
        g["lr"] = lr_at(step - 1)
    batch = job["batches"][step - 1]
    free = [train["free"][i] for i in batch] if "free" in train else None
    loss = step_loss(model, [train["prompts"][i] for i in batch], [train["answers"][i] for i in batch], free)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if o["gradClip"] > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), o["gradClip"])
    opt.step()
    if step % job["every"] == 0 or step == steps:
        model.eval()
        point = {"step": step, "heldOut": answers(model, held), "train": answers(model, probe),
                 "sampledHeldOut": answers(model, held, True, gen), "seconds": round(time.time() - started, 1)}
        print(json.dumps(point), flush=True)
        if job.get("serve"):
            serve(model, gen)
        model.train()
