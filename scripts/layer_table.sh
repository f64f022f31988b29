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
layers=$("$BOSCH" info "$model" 2>/dev/null | awk '$1 == "layers" {print $2}')
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
  BOSCH_QUIET=1 "$BOSCH" eval "$model" "${common[@]}" --mask "layers:$l" --window "$W" --sinks "$S" --json "$tmp/r$l.json" >/dev/null
  e=$(em "$tmp/r$l.json")
  echo "| layer $l SWA | $e | $(python3 -c "print(f'{$full-$e:.3f}')") |"
done
