#!/usr/bin/env bash
# The README's testbed table: BOSCH vs the static rankings on models/deep, the two-path testbed
# with backup retrieval heads (models/deep/README.md), calibrated on calib-split NIAH samples,
# scored on 88 held-out test-split samples. Writes docs/results/deep-compare[-seedS]/.
#   scripts/compare_deep.sh [BOSCH_BINARY]
#   SEED=1                  the second seed (other calibration and test samples, search seed)
#   RATIOS, METHODS, DEPTHS default to the paper's four ratios, every method and 3 calibration
#   depths per family (hours on 2 cores: 72 KV heads); the README's table was run with
#   METHODS=bosch,bosch-plus,bosch-layer,rand,intr,bme,rand-heads,locality,razor,retrieval,gate,ablation,apl,qada,proxy
#   DEPTHS=1 (about an hour per seed), then scripts/compare_table.py.
set -euo pipefail
BOSCH=$(realpath "${1:-build/bosch}")
cd "$(dirname "$0")/.."
seed=${SEED:-0}
out=${COMPARE_OUT:-docs/results/deep-compare$([[ $seed == 0 ]] || echo "-seed$seed")}
"$BOSCH" compare models/deep --ratios "${RATIOS:-0.25,0.5,0.75,0.875}" --methods "${METHODS:-all}" \
  --objective niah --lengths 1024 --depths "${DEPTHS:-3}" --calib-solved-only \
  --test-depths 11 --test-samples 1 --window 64 --sinks 4 --seed "$seed" \
  --journal-dir "${JOURNAL_DIR:-build/compare-journals-deep-seed$seed}" ${RESUME:+--resume} --report "$out"
