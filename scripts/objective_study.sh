#!/usr/bin/env bash
# Which calibration objective generalises best (issue: an objective with signal past
# saturation)? bosch-plus (and single-head ablation, which ranks by the same objective) on the
# default model at 0.75 and 0.875, calibrated with each objective below and scored on the SAME
# held-out test samples with the same test metric (exact match + 0.01 answer log-probability):
#   exact+lp0.01   the default: exact match + 0.01 x mean answer log-probability
#   exact+lp0.1    a ten times larger log-probability weight
#   exact+kl0.1    the default + 0.1 x KL(full model || mask) at the answer tokens
#   exact+kl1      the default + 1 x KL
# Writes docs/results/objective-study/seed<S>/<variant>.json and summary.md (each variant
# against the default, paired bootstrap over test samples; the variants measured so far).
#   scripts/objective_study.sh [BOSCH_BINARY]   (SEED=0 by default; about 20 minutes on an idle
#   2-core machine; VARIANTS="..." to choose, KEEP=1 to reuse finished ones)
set -euo pipefail
BOSCH=$(realpath "${1:-build/bosch}")
cd "$(dirname "$0")/.."
seed=${SEED:-0}
out=${STUDY_OUT:-docs/results/objective-study}/seed$seed
mkdir -p "$out"
declare -A flags=([exact+lp0.01]="" [exact+lp0.1]="--logprob-weight 0.1" [exact+kl0.1]="--kl-weight 0.1" [exact+kl1]="--kl-weight 1")
variants=${VARIANTS:-exact+lp0.01 exact+lp0.1 exact+kl0.1 exact+kl1}
for v in $variants; do
  [[ -f $out/$v.json && -n ${KEEP:-} ]] && continue  # KEEP=1: reuse variants already measured
  echo "== $v (seed $seed)" >&2
  # shellcheck disable=SC2086
  "$BOSCH" compare models/default --ratios 0.75,0.875 --methods bosch-plus,ablation \
    --objective niah --lengths 1024 --depths 3 --calib-solved-only --test-depths 11 --test-samples 1 \
    --window 64 --sinks 4 --seed "$seed" ${flags[$v]} --json "$out/$v.json" > /dev/null
done
python3 - "$out" <<'PY' > "$out/summary.md"
import json, sys, pathlib
sys.path.insert(0, "scripts")
from versus import versus
out = pathlib.Path(sys.argv[1])
variants = [v for v in ["exact+lp0.01", "exact+lp0.1", "exact+kl0.1", "exact+kl1"] if (out / f"{v}.json").exists()]
runs = {v: json.loads((out / f"{v}.json").read_text()) for v in variants}
def row(v, m, r):
    return next(x for x in runs[v]["results"] if x["method"] == m and x["ratio"] == r)
print(f"Seed {runs[variants[0]]['settings']['seed']}; {runs[variants[0]]['settings']['calibration_samples']} calibration samples; "
      f"test: {runs[variants[0]]['settings']['test']}. Test S^ (exact match + 0.01 log-probability, normalised); "
      "difference to the default objective, paired over test samples, 95% bootstrap interval.\n")
print("| ratio | method | objective | calib S^ (own objective) | test S^ | test exact | vs exact+lp0.01 [95% CI] |")
print("|---|---|---|---|---|---|---|")
for r in runs[variants[0]]["ratios"]:
    for m in ["bosch-plus", "ablation"]:
        base = row(variants[0], m, r)
        for v in variants:
            x = row(v, m, r)
            c = x["calibration_normalized"]
            vs = versus(out / f"{v}.json", m, out / f"{variants[0]}.json", m, r)["text"] if v != variants[0] else ""
            print(f"| {r} | {m} | {v} | {c:.3f} | {x['normalized']:.3f} | {x['exact_match']:.3f} | "
                  f"{vs} |" if v != variants[0] else
                  f"| {r} | {m} | {v} | {c:.3f} | {x['normalized']:.3f} | {x['exact_match']:.3f} | (reference) |")
PY
cat "$out/summary.md"
