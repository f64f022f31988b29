#!/usr/bin/env bash
# Per-layer sensitivity of a model: NIAH exact match with full attention, with every KV head SWA,
# and with one layer at a time entirely SWA (`bosch eval --sweep layers`: one model load).
#   scripts/layer_table.sh [MODEL] [LENGTH] [W] [S]     (prints a Markdown table)
set -euo pipefail
cd "$(dirname "$0")/.."
BOSCH=${BOSCH:-build/bosch}
model=${1:-models/default}; len=${2:-1024}; W=${3:-64}; S=${4:-4}
BOSCH_QUIET=1 exec "$BOSCH" eval "$model" --suite niah --lengths "$len" --depths 11 --samples 1 --split test \
  --sweep layers --window "$W" --sinks "$S"
