#!/usr/bin/env bash
# Per-head sensitivity of a model on the test split: the cost of one KV head at a time SWA
# (everything else full), a row per layer and a column per KV head: what single-head ablation
# sees, before any entanglement (`bosch eval --sweep heads`: one model load, N + 2 scorings).
#   scripts/head_table.sh [MODEL] [DEPTHS] [W] [S]
set -euo pipefail
model=${1:-models/deep}; depths=${2:-3}; W=${3:-64}; S=${4:-4}
[[ -e $model ]] && model=$(realpath "$model")  # a path given from anywhere (else a name: default, deep)
[[ -n ${BOSCH:-} ]] && BOSCH=$(realpath "$BOSCH")
cd "$(dirname "$0")/.."
BOSCH=${BOSCH:-build/bosch}
BOSCH_QUIET=1 exec "$BOSCH" eval "$model" --suite niah --lengths 1024 --depths "$depths" --samples 1 --split test \
  --sweep heads --window "$W" --sinks "$S"
