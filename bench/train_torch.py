"""The benchmark shape of bench/train.ts in PyTorch on CPU: same model (pre-LN GPT, tied
embeddings, learned positions), same batch, same GRPO loss and AdamW step. Prints JSON.

Needs torch (pip install torch; for the benchmark only, not CI). Usage:
  python3 bench/train_torch.py '{"vocab":64,"d":64,"layers":2,"heads":4,"seq":48,"batch":64,"steps":10}'
Optional keys: "threads" (CPU threads), "device" ("cuda" for bench/gpu.sh; default "cpu").
"""
import json
import math
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

cfg = json.loads(sys.argv[1])
torch.manual_seed(0)
threads = cfg.get("threads")
if threads:
    torch.set_num_threads(int(threads))
V, D, L, H, T, B = cfg["vocab"], cfg["d"], cfg["layers"], cfg["heads"], cfg["seq"], cfg["batch"]
dev = torch.device(cfg.get("device", "cpu"))


def sync():
    if dev.type == "cuda":
        torch.cuda.synchronize()


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.c_attn, self.c_proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.c_fc, self.mlp_proj = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(self, x):
        n, t, _ = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(D, dim=2)
        q, k, v = (z.view(n, t, H, D // H).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.c_proj(y.transpose(1, 2).reshape(n, t, D))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(V, D), nn.Embedding(T, D)
        self.h = nn.ModuleList(Block() for _ in range(L))
        self.ln_f = nn.LayerNorm(D)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for b in self.h:
            x = b(x)
        return self.ln_f(x) @ self.wte.weight.T


model = GPT().to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
idx = torch.randint(0, V, (B, T)).to(dev)
tgt = torch.randint(0, V, (B, T)).to(dev)
mask = torch.ones(B, T, device=dev)
adv = torch.randn(B).to(dev)
with torch.no_grad():
    old = torch.log_softmax(model(idx), -1).gather(-1, tgt[..., None])[..., 0]


def step():
    logp = torch.log_softmax(model(idx), -1).gather(-1, tgt[..., None])[..., 0]
    ratio = torch.exp(logp - old)
    a = adv[:, None]
    tok = -torch.min(ratio * a, torch.clamp(ratio, 0.8, 1.2) * a)
    loss = ((tok * mask).sum(1) / mask.sum(1).clamp(min=1)).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()


for _ in range(2):
    step()
# the median step, as bench/train.ts reports its own: on a shared machine a burst of load hits single steps
times = []
for _ in range(cfg["steps"]):
    t0 = time.perf_counter()
    step()
    sync()
    times.append(time.perf_counter() - t0)
dt = statistics.median(times)
print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(), "stepMs": dt * 1000,
                  "tokensPerS": B * T / dt, "device": str(dev)}))
