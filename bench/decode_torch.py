"""The PyTorch peer of bench/decode.ts: a KV-cache decode of the same model (pre-LN GPT, tied
embeddings, learned positions) on CPU, with the same work: B prompts of P tokens (<bos> and the
prompt) run once, their keys and values shared by G rows each, then one step per answer position
for A positions, each sampling every row's token from softmax(logits / T) over the whole
vocabulary (no grammar) and keeping its log-prob. The cache is preallocated and written in place
(as Hugging Face's StaticCache), attention is F.scaled_dot_product_attention, no autograd
(torch.inference_mode). Prints JSON: the median call and tokens/s (rows x positions, prefill
included, as bench/decode.ts counts). With "serve": true (bench/decode-peer.ts) it prints one
line when warm, then times one call for each line read on stdin and prints {"ms": ...}.

Needs torch (the venv of bench/torch-venv.ts). Usage:
  python3 bench/decode_torch.py '{"vocab":64,"d":64,"layers":2,"heads":4,"positions":48,
    "prompts":8,"group":8,"promptLen":31,"answerLen":15,"calls":10,"threads":1}'
"""
import json
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

cfg = json.loads(sys.argv[1])
torch.manual_seed(0)
torch.set_num_threads(int(cfg.get("threads", 1)))
V, D, L, H = cfg["vocab"], cfg["d"], cfg["layers"], cfg["heads"]
B, G, P, A = cfg["prompts"], cfg["group"], cfg["promptLen"] + 1, cfg["answerLen"] + 1
N, DH = B * G, D // H


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.c_attn, self.c_proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.c_fc, self.mlp_proj = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(self, x, k_cache, v_cache, at, causal):
        """x [n, t, D]; writes this block's keys/values at cache positions at..at+t and attends to 0..at+t."""
        n, t, _ = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(D, dim=2)
        q, k, v = (z.view(n, t, H, DH).transpose(1, 2) for z in (q, k, v))
        if causal:  # prefill: B prompts, their keys/values copied to each prompt's G rows
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            k_cache[:, :, :t] = k.repeat_interleave(G, 0)
            v_cache[:, :, :t] = v.repeat_interleave(G, 0)
        else:
            k_cache[:, :, at:at + t] = k
            v_cache[:, :, at:at + t] = v
            y = F.scaled_dot_product_attention(q, k_cache[:, :, :at + t], v_cache[:, :, :at + t])
        x = x + self.c_proj(y.transpose(1, 2).reshape(n, t, D))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(V, D), nn.Embedding(cfg["positions"], D)
        self.h = nn.ModuleList(Block() for _ in range(L))
        self.ln_f = nn.LayerNorm(D)

    def step(self, idx, pos, caches, at, causal):
        x = self.wte(idx) + self.wpe(pos)
        for b, (kc, vc) in zip(self.h, caches):
            x = b(x, kc, vc, at, causal)
        return self.ln_f(x[:, -1]) @ self.wte.weight.T


model = GPT().eval()
prompts = torch.randint(4, V, (B, P))
prompts[:, 0] = 1  # <bos>


@torch.inference_mode()
def decode():
    caches = [(torch.empty(N, H, P + A, DH), torch.empty(N, H, P + A, DH)) for _ in range(L)]
    logits = model.step(prompts, torch.arange(P), caches, 0, True).repeat_interleave(G, 0)
    tokens, logps = [], []
    for k in range(A):
        lsm = torch.log_softmax(logits, -1)  # temperature 1
        tok = torch.multinomial(lsm.exp(), 1)
        tokens.append(tok)
        logps.append(lsm.gather(1, tok))
        if k == A - 1:
            break
        # answer input k at position P + k, as cogen's maxPromptLen + 1 + k
        logits = model.step(tok, torch.tensor([P + k]), caches, P + k, False)
    return torch.cat(tokens, 1).tolist(), torch.cat(logps, 1).tolist()


for _ in range(2):
    decode()
if cfg.get("serve"):
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(), "steps": A}), flush=True)
    for line in sys.stdin:
        t0 = time.perf_counter()
        decode()
        print(json.dumps({"ms": (time.perf_counter() - t0) * 1000}), flush=True)
    sys.exit(0)
times = []
for _ in range(cfg["calls"]):
    t0 = time.perf_counter()
    decode()
    times.append(time.perf_counter() - t0)
dt = statistics.median(times)
print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(), "msPerCall": dt * 1000,
                  "tokensPerS": N * A / dt, "steps": A, "callsMs": [t * 1000 for t in times]}))
