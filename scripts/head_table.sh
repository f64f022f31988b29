#!/usr/bin/env bash
# Per-head sensitivity of a model, measured by `bosch eval` on the test split: NIAH exact match
# with full attention, then with one KV head at a time SWA (everything else full). Prints a
# Markdown grid, a row per layer and a column per KV head, of each head's cost (full minus
# its exact match): what single-head ablation sees, before any entanglement.
#   scripts/head_table.sh [MODEL] [DEPTHS] [W] [S]     (N+1 evaluations for N KV heads)
set -euo pipefail
model=${1:-models/deep}; depths=${2:-3}; W=${3:-64}; S=${4:-4}
[[ -e $model ]] && model=$(realpath "$model")  # a path given from anywhere (else a name: default, deep)
[[ -n ${BOSCH:-} ]] && BOSCH=$(realpath "$BOSCH")
cd "$(dirname "$0")/.."
BOSCH=${BOSCH:-build/bosch}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
common=(--suite niah --lengths 1024 --depths "$depths" --samples 1 --split test)
# One run per KV head, named L.H (`--mask heads:L.H`: that head SWA, the rest full).
read -r layers kv < <("$BOSCH" info "$model" 2>/dev/null | awk '$1 == "layers" {l = $2} $1 == "heads" {k = $4} END {print l, k}')
for ((l = 0; l < layers; ++l)); do for ((h = 0; h < kv; ++h)); do echo "$l $h"; done; done > "$tmp/heads.txt"
BOSCH_QUIET=1 "$BOSCH" eval "$model" "${common[@]}" --json "$tmp/full.json" >/dev/null
total=$(wc -l < "$tmp/heads.txt"); done_=0
while read -r l h; do
  BOSCH_QUIET=1 "$BOSCH" eval "$model" "${common[@]}" --mask "heads:$l.$h" --window "$W" --sinks "$S" --json "$tmp/r${l}_$h.json" \
    </dev/null >/dev/null
  done_=$((done_ + 1)); echo "head_table: $done_/$total heads" >&2
done < "$tmp/heads.txt"
python3 - "$tmp" "$depths" "$W" "$S" <<'PY'
import json, sys
out, depths, W, S = sys.argv[1:]
em = lambda p: json.load(open(p))["exact_match"]
full = em(f"{out}/full.json")
cost = {}
for line in open(f"{out}/heads.txt"):
    l, h = map(int, line.split())
    cost[l, h] = full - em(f"{out}/r{l}_{h}.json")
layers = 1 + max(l for l, _ in cost); heads = 1 + max(h for _, h in cost)
print(f"Cost of one KV head SWA({W}, {S}) alone (full exact match minus the masked one; full = "
      f"{full:.3f}), NIAH at 1024 tokens, all 8 families, {depths} depths, test split:")
print()
print("| layer | " + " | ".join(f"H{h}" for h in range(heads)) + " |")
print("| --- |" + " ---: |" * heads)
for l in range(layers):
    print(f"| {l} | " + " | ".join(f"{cost[l, h]:.3f}" for h in range(heads)) + " |")
nonzero = sorted(((c, l, h) for (l, h), c in cost.items() if abs(c) >= 0.0005), reverse=True)
print()
print(f"{len(nonzero)} of {len(cost)} heads move the score; by cost: "
      + (", ".join(f"{l}.{h} {c:+.3f}" for c, l, h in nonzero) or "none"))
PY
