#!/usr/bin/env bash
# How many calibration samples does the search need (issue: size the default calibration set
# by measurement)? bosch-plus and the two strongest static rankings (gate, ablation) at 0.75 and
# 0.875, calibrated on sets of different sizes, every run scored on the SAME held-out test set:
#   default model (MODEL=default): 1, 3 (the default), 5 or 8 depths per NIAH family (8, 24,
#     40, 64 samples before dropping those the full model fails); 88 test samples
#   stories260K (MODEL=stories, text objective): 2, 4, 8 (the script's default) or 16 chunks of
#     512 tokens of the model's own stories; 16 test chunks (run scripts/compare_stories.sh
#     with the same SEED first: it writes the texts)
# Writes docs/results/calib-size/<model>-seed<S>/<d|c><size>.json and summary.md: test S^ per
# size, bosch-plus against the best baseline of its own size and against bosch-plus at the
# default size (paired bootstrap over test samples), and the cost.
#   scripts/calib_size_study.sh [BOSCH_BINARY]   (SEED=0; SIZES="1 3 8" to choose; KEEP=1 reuses
#   finished sizes, e.g. a d3.json copied from the compare table of the same seed or from the
#   objective study, which ran the same settings (a run without gate is compared with ablation
#   alone); default model: about 25 minutes per seed for 1,3,8 on an idle 2-core machine;
#   stories: about 3 minutes)
set -euo pipefail
BOSCH=$(realpath "${1:-build/bosch}")
cd "$(dirname "$0")/.."
seed=${SEED:-0}
model=${MODEL:-default}
out=${STUDY_OUT:-docs/results/calib-size}/$model-seed$seed
mkdir -p "$out"
if [[ $model == default ]]; then
  prefix=d default_size=3 sizes=${SIZES:-${DEPTHS:-1 3 5 8}}
else
  [[ $model == stories ]] || { echo "calib_size_study: MODEL=$model (expected default or stories)" >&2; exit 1; }
  prefix=c default_size=8 sizes=${SIZES:-2 4 8 16}
  text=build/stories-text$([[ $seed == 0 ]] || echo "-seed$seed")
  [[ -f $text/calib.txt && -f $text/test.txt ]] || {
    echo "calib_size_study: $text/{calib,test}.txt missing: run SEED=$seed scripts/compare_stories.sh first" >&2; exit 1; }
fi
for n in $sizes; do
  [[ -f $out/$prefix$n.json && -n ${KEEP:-} ]] && continue
  echo "== $model, calibration size $n (seed $seed)" >&2
  if [[ $model == default ]]; then
    "$BOSCH" compare models/default --ratios 0.75,0.875 --methods bosch-plus,gate,ablation \
      --objective niah --lengths 1024 --depths "$n" --calib-solved-only --test-depths 11 --test-samples 1 \
      --window 64 --sinks 4 --seed "$seed" --json "$out/$prefix$n.json" > /dev/null
  else
    "$BOSCH" compare tests/data/stories260K/stories260K.gguf --ratios 0.75,0.875 --methods bosch-plus,gate,ablation \
      --objective "text:$text/calib.txt" --test-objective "text:$text/test.txt" \
      --lengths 512 --samples "$n" --test-samples 16 --window 32 --sinks 4 --seed "$seed" \
      --json "$out/$prefix$n.json" > /dev/null
  fi
done
python3 - "$out" "$prefix" "$default_size" <<'PY' > "$out/summary.md"
import json, sys, pathlib
sys.path.insert(0, "scripts")
from versus import versus
out = pathlib.Path(sys.argv[1])
prefix, default_size = sys.argv[2], int(sys.argv[3])
runs = {int(p.stem[1:]): json.loads(p.read_text()) for p in sorted(out.glob(f"{prefix}*.json"))}
sizes = sorted(runs)
default = default_size if default_size in runs else sizes[0]
knob = "depths" if prefix == "d" else "chunks"
def row(d, m, r):
    return next(x for x in runs[d]["results"] if x["method"] == m and x["ratio"] == r)
first = runs[sizes[0]]
metric = ("exact match + 0.01 answer log-probability" if prefix == "d" else "mean log-probability of the scored tokens")
print(f"Search seed {first['settings']['seed']} (calibration samples drawn with the same seed); "
      f"{first['settings']['test']} (the same test set for every size). Test S^ = {metric}, "
      "normalised; differences paired over test samples, 95% bootstrap interval "
      "(10000 resamples, `bosch versus`). Seconds: wall clock of the bosch-plus search on a 2-core machine.\n")
print(f"| ratio | {knob} | calib samples | bosch-plus calib S^ | bosch-plus test S^ | gate | ablation | "
      "bosch-plus vs best baseline | bosch-plus vs default size | evaluations | seconds |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for r in first["ratios"]:
    for d in sizes:
        b = row(d, "bosch-plus", r)
        base = [x for x in runs[d]["results"] if x["ratio"] == r and x["method"] in ("gate", "ablation")]
        best = max(base, key=lambda x: x["normalized"])
        g, a = ({x["method"]: f"{x['normalized']:.3f}" for x in base}.get(m, "-") for m in ("gate", "ablation"))
        f = out / f"{prefix}{d}.json"
        vs_default = "(reference)" if d == default else versus(f, "bosch-plus", out / f"{prefix}{default}.json", "bosch-plus", r)["text"]
        print(f"| {r} | {d} | {runs[d]['settings']['calibration_samples']} | {b['calibration_normalized']:.3f} | "
              f"{b['normalized']:.3f} | {g} | {a} | "
              f"{versus(f, 'bosch-plus', f, best['method'], r)['text']} vs {best['method']} | {vs_default} | "
              f"{b['evaluations']} | {b['seconds']:.0f} |")
PY
cat "$out/summary.md"
