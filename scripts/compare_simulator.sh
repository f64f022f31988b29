#!/usr/bin/env bash
# Every method that needs no model weights on the search simulator at the four Qwen3 shapes of
# the BOSCH paper (docs/simulator.md), 100 seeded instances each, twice: instance seeds 1..100
# (the set the defaults were looked at on) and 1001..1100 (never looked at before the table was
# written). Writes docs/results/simulator/<shape>-s<first seed>/ (report.md, compare.json).
#   scripts/compare_simulator.sh [BOSCH_BINARY]     (about 10 minutes on 2 cores)
set -euo pipefail
BOSCH=$(realpath "${1:-build/bosch}")
cd "$(dirname "$0")/.."
out=${COMPARE_OUT:-docs/results/simulator}
instances=${INSTANCES:-100}
for shape in ${SHAPES:-qwen3-1.7b qwen3-8b qwen3-14b qwen3-30b-a3b}; do
  for seed in 1 1001; do
    echo "== $shape, instances $seed..$((seed + instances - 1))" >&2
    "$BOSCH" compare --objective "synthetic:$shape:$seed" --instances "$instances" \
      --ratios 0.25,0.5,0.75,0.875 --methods all --report "$out/$shape-s$seed" > /dev/null
  done
done
echo "compare_simulator: tables in $out/*/report.md" >&2
