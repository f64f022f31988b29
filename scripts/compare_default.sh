#!/usr/bin/env bash
# The README's comparison table: BOSCH vs every baseline at the four ratios of the paper on the
# embedded default model, calibrated on calib-split NIAH samples, scored on held-out test-split
# samples. Writes docs/results/default-compare/ (report.md, compare.json, masks as SVG + JSON).
#   scripts/compare_default.sh [BOSCH_BINARY]      (SEED=1 for the second-seed table; METHODS=a,b to run fewer)
set -euo pipefail
BOSCH=$(realpath "${1:-build/bosch}")
cd "$(dirname "$0")/.."
seed=${SEED:-0}
out=${COMPARE_OUT:-docs/results/default-compare$([[ $seed == 0 ]] || echo "-seed$seed")}
"$BOSCH" compare models/default --ratios 0.25,0.5,0.75,0.875 --methods "${METHODS:-all}" \
  --objective niah --lengths 1024 --depths 3 --calib-solved-only \
  --test-depths 11 --test-samples 1 --window 64 --sinks 4 --seed "$seed" \
  --journal-dir "${JOURNAL_DIR:-build/compare-journals-seed$seed}" ${RESUME:+--resume} --report "$out"
