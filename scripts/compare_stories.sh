#!/usr/bin/env bash
# BOSCH vs baselines on a real pretrained model that cannot do NIAH: stories260K (tests/data),
# calibrated and scored by -NLL on text. Both texts are the model's own sampled stories
# (temperature 1; seeds 1-40 for calibration, 101-140 for the held-out test), so nothing is
# downloaded. Writes docs/results/stories260K-compare/ (report.md, compare.json, masks).
#   scripts/compare_stories.sh [BOSCH_BINARY]     (SEED=1: the second-seed table: other stories
#   for calibration (1001-1040) and test (1101-1140), search seed 1)
set -euo pipefail
BOSCH=$(realpath "${1:-build/bosch}")
cd "$(dirname "$0")/.."
model=tests/data/stories260K/stories260K.gguf
[[ -f $model ]] || { echo "compare_stories: $model not found (tests/data/stories260K)" >&2; exit 1; }
seed=${SEED:-0}
text=${TEXT_DIR:-build/stories-text$([[ $seed == 0 ]] || echo "-seed$seed")}
out=${COMPARE_OUT:-docs/results/stories260K-compare$([[ $seed == 0 ]] || echo "-seed$seed")}
base=$((seed * 1000))
mkdir -p "$text"
stories() {  # seeds... -> one file of sampled stories
  for s in "$@"; do
    BOSCH_QUIET=1 "$BOSCH" generate "$model" --temperature 1 --seed "$s" --max-tokens 400 2>/dev/null
    echo
  done
}
stories $(seq $((base + 1)) $((base + 40))) > "$text/calib.txt.tmp" && mv "$text/calib.txt.tmp" "$text/calib.txt"
stories $(seq $((base + 101)) $((base + 140))) > "$text/test.txt.tmp" && mv "$text/test.txt.tmp" "$text/test.txt"
"$BOSCH" compare "$model" --ratios 0.25,0.5,0.75,0.875 --methods all \
  --objective "text:$text/calib.txt" --test-objective "text:$text/test.txt" \
  --lengths 512 --samples 8 --test-samples 16 --window 32 --sinks 4 --seed "$seed" \
  --journal-dir "${JOURNAL_DIR:-build/compare-stories-journals$([[ $seed == 0 ]] || echo "-seed$seed")}" --report "$out"
