#!/bin/bash
# Behaviour unchanged between two commits (the check for a refactor; bench/results/house.md): the
# drafts' fingerprints (drafts-digest.ts) and a smoke run's store and checkpoints (compare-runs.py),
# each commit in its own temporary worktree.   Usage: bash bench/unchanged/check.sh BASE [OTHER=HEAD]
set -euo pipefail
cd "$(dirname "$0")/../.."
base=$1; other=${2:-HEAD}; tmp=$(mktemp -d)
trap 'git worktree remove -f "$tmp/a" >/dev/null 2>&1 || true; git worktree remove -f "$tmp/b" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
for side in a b; do
  rev=$([ $side = a ] && echo "$base" || echo "$other")
  git worktree add -f --detach "$tmp/$side" "$rev" >/dev/null 2>&1
  ln -s "$PWD/node_modules" "$tmp/$side/node_modules"
  mkdir -p "$tmp/$side/bench/unchanged" && cp bench/unchanged/drafts-digest.ts "$tmp/$side/bench/unchanged/"
  # before core/ existed (c3b466a), the task model and the rng lived in src/
  [ -e "$tmp/$side/core/rng.ts" ] || sed -i 's#\.\./\.\./core/#../../src/#' "$tmp/$side/bench/unchanged/drafts-digest.ts"
  (cd "$tmp/$side" && npx tsx bench/unchanged/drafts-digest.ts > "$tmp/$side.digest" &&
    node bin/cogen.js run --preset smoke --backend wasm --run-id smoke --runs-dir "$tmp/$side.runs" > "$tmp/$side.log" 2>&1)
done
if cmp -s "$tmp/a.digest" "$tmp/b.digest"; then echo "drafts: same"; else echo "drafts: DIFFERENT"; diff "$tmp/a.digest" "$tmp/b.digest" | head -20; fi
if python3 bench/unchanged/compare-runs.py "$tmp/a.runs/smoke" "$tmp/b.runs/smoke" > "$tmp/compare"; then echo "smoke run: same (every table, every checkpoint file)"
else echo "smoke run: DIFFERENT"; grep -v ' same$' "$tmp/compare" | cut -c1-240; fi
