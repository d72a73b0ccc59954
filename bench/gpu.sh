#!/usr/bin/env bash
# GPU readiness check: run on a machine with an NVIDIA driver. Needs no network: everything it uses
# must already be in this checkout (node_modules from `npm ci`, and @tensorflow/tfjs-node-gpu from
# `cogen setup tensorflow --gpu`, both done where the network is) or on the machine (a python with
# torch + CUDA for the comparison: TORCH_PYTHON). It measures what is there, on the reference shape
# of bench/train.ts (vocab 64, d 64, 2 layers, 4 heads, seq 48, batch 64, one GRPO step), and says
# plainly what it could not measure and why. Writes $OUT/gpu.log and $OUT/gpu-torch*.json (OUT
# defaults to bench/results).
#   1. the driver (nvidia-smi);
#   2. the tensorflow backend on the GPU build: which package and device the backend line names,
#      the step's time (bench/train.ts --only tensorflow);
#   3. the webgpu backend through Dawn (bench/train.ts --only webgpu; falls back to wasm without a
#      hardware adapter, and says so);
#   4. PyTorch CUDA on the same shape (bench/train_torch.py, device cuda).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-bench/results}"
mkdir -p "$OUT"
LOG="$OUT/gpu.log"
: > "$LOG"
say() { echo "$@" | tee -a "$LOG"; }
PY="${TORCH_PYTHON:-python3}"
SHAPE='"vocab":64,"d":64,"layers":2,"heads":4,"seq":48,"batch":64'

say "== date $(date -u +%FT%TZ), node $(node --version 2>/dev/null || echo missing)"
say "== 1. driver"
if command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$LOG"
else
  say "not measured: no nvidia-smi (no NVIDIA driver on this machine)"
fi

if [ ! -d node_modules/@tensorflow/tfjs-core ]; then
  say "not measured (2, 3): no node_modules here; run npm ci where the network is and bring the checkout"
else
  say "== 2. tensorflow backend (GPU build)"
  if [ -f node_modules/@tensorflow/tfjs-node-gpu/deps/cogen-setup.json ]; then
    timeout 900 npx tsx bench/train.ts --only tensorflow --quick 2>&1 | tee -a "$LOG" | grep -E "solver backend|tensorflow|error" || say "the tensorflow run failed (see $LOG)"
  else
    say "not measured: @tensorflow/tfjs-node-gpu is not set up here (cogen setup tensorflow --gpu needs the network: the ~475 MB tensorflow wheel and ~1.8 GB of nvidia-*-cu12 wheels; ~3.7 GB installed)"
  fi
  say "== 3. webgpu backend (Dawn)"
  if [ -d node_modules/webgpu ]; then
    timeout 900 npx tsx bench/train.ts --only webgpu --quick 2>&1 | tee -a "$LOG" | grep -E "solver backend|webgpu|wasm|error" || say "the webgpu run failed (see $LOG)"
  else
    say "not measured: the optional webgpu package is not installed"
  fi
fi

say "== 4. PyTorch CUDA, same shape"
if "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  "$PY" bench/train_torch.py "{$SHAPE,\"steps\":20,\"device\":\"cuda\"}" 2>&1 | tee -a "$LOG" | tail -1 > "$OUT/gpu-torch.json"
  "$PY" bench/train_torch.py "{$SHAPE,\"steps\":20,\"threads\":2}" 2>&1 | tee -a "$LOG" | tail -1 > "$OUT/gpu-torch-cpu2.json"
else
  say "not measured: $PY has no torch with CUDA (set TORCH_PYTHON)"
fi
say "== done; the log is $LOG"
