#!/usr/bin/env bash
# Per-layer sensitivity of a model, measured by `bosch eval`: NIAH exact match with full
# attention, with every KV head SWA, and with one layer at a time entirely SWA.
#   scripts/layer_table.sh [MODEL] [LENGTH] [W] [S]     (prints a Markdown table)
set -euo pipefail
cd "$(dirname "$0")/.."
BOSCH=${BOSCH:-build/bosch}
model=${1:-models/default}; len=${2:-1024}; W=${3:-64}; S=${4:-4}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
common=(--suite niah --lengths "$len" --depths 11 --samples 1 --split test)
em() { python3 -c "import json,sys; print(f\"{json.load(open(sys.argv[1]))['exact_match']:.3f}\")" "$1"; }
# A template mask with this model's identity, then one mask per layer.
"$BOSCH" baseline "$model" --method intr --ratio 0.5 --window "$W" --sinks "$S" --out "$tmp/template.json" \
  --objective niah:passkey --lengths 256 >/dev/null 2>&1
layers=$(python3 -c "import json; print(len(json.load(open('$tmp/template.json'))['swa']))")
for ((l = 0; l < layers; ++l)); do
  python3 - "$tmp/template.json" "$tmp/layer$l.json" "$l" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); l = int(sys.argv[3])
m["swa"] = [[1 if i == l else 0 for _ in row] for i, row in enumerate(m["swa"])]
m["target_ratio"] = 1 / len(m["swa"]); m["provenance"] = {"method": f"layer {l} all SWA"}
json.dump(m, open(sys.argv[2], "w"))
PY
done
BOSCH_QUIET=1 "$BOSCH" eval "$model" "${common[@]}" --json "$tmp/full.json" >/dev/null
BOSCH_QUIET=1 "$BOSCH" eval "$model" "${common[@]}" --mask all-swa --window "$W" --sinks "$S" --json "$tmp/swa.json" >/dev/null
full=$(em "$tmp/full.json")
echo "NIAH exact match, all 8 families, $len tokens, 11 depths, test split (W=$W, S=$S):"
echo
echo "| mask | exact match | drop vs full |"
echo "| --- | ---: | ---: |"
echo "| full attention | $full | |"
echo "| all KV heads SWA | $(em "$tmp/swa.json") | $(python3 -c "print(f'{$full-$(em "$tmp/swa.json"):.3f}')") |"
for ((l = 0; l < layers; ++l)); do
  BOSCH_QUIET=1 "$BOSCH" eval "$model" "${common[@]}" --mask "$tmp/layer$l.json" --json "$tmp/r$l.json" >/dev/null
  e=$(em "$tmp/r$l.json")
  echo "| layer $l SWA | $e | $(python3 -c "print(f'{$full-$e:.3f}')") |"
done
