#!/usr/bin/env bash
# How many calibration samples does the search need (issue: size the default calibration set
# by measurement)? bosch-plus and the two strongest static rankings (gate, ablation) on the
# default model at 0.75 and 0.875, calibrated on 1, 3 (the default), 5 or 8 depths per NIAH
# family (8, 24, 40, 64 samples before dropping those the full model fails), every run scored
# on the SAME 88 held-out test samples. Writes docs/results/calib-size/seed<S>/d<D>.json and
# summary.md: test S^ per size, bosch-plus against the best baseline of its own size and
# against bosch-plus at the default size (paired bootstrap over test samples), and the cost.
#   scripts/calib_size_study.sh [BOSCH_BINARY]   (SEED=0 by default; DEPTHS="1 3 8" to choose,
#   KEEP=1 to reuse finished sizes, e.g. a d3.json copied from the compare table of the same seed
#   or from the objective study, which ran the same settings; a run without gate is compared
#   with ablation alone; about 25 minutes per seed for 1,3,8 on an idle 2-core machine)
set -euo pipefail
BOSCH=$(realpath "${1:-build/bosch}")
cd "$(dirname "$0")/.."
seed=${SEED:-0}
out=${STUDY_OUT:-docs/results/calib-size}/seed$seed
mkdir -p "$out"
for d in ${DEPTHS:-1 3 5 8}; do
  [[ -f $out/d$d.json && -n ${KEEP:-} ]] && continue
  echo "== depths $d (seed $seed)" >&2
  "$BOSCH" compare models/default --ratios 0.75,0.875 --methods bosch-plus,gate,ablation \
    --objective niah --lengths 1024 --depths "$d" --calib-solved-only --test-depths 11 --test-samples 1 \
    --window 64 --sinks 4 --seed "$seed" --json "$out/d$d.json" > /dev/null
done
python3 - "$out" <<'PY' > "$out/summary.md"
import json, random, sys, pathlib
out = pathlib.Path(sys.argv[1])
runs = {int(p.stem[1:]): json.loads(p.read_text()) for p in sorted(out.glob("d*.json"))}
sizes = sorted(runs)
default = 3 if 3 in runs else sizes[0]
def row(d, m, r):
    return next(x for x in runs[d]["results"] if x["method"] == m and x["ratio"] == r)
def boot(v, n=10000, seed=7):
    rng = random.Random(seed); k = len(v)
    means = sorted(sum(v[rng.randrange(k)] for _ in range(k)) / k for _ in range(n))
    return sum(v) / k, means[int(0.025 * n)], means[int(0.975 * n)]
def ci(a, b, scale):
    mean, lo, hi = boot([(x - y) / scale for x, y in zip(a, b)])
    tag = " (better)" if lo > 0 else " (worse)" if hi < 0 else ""
    return f"{mean:+.3f} [{lo:+.3f}, {hi:+.3f}]{tag}"
first = runs[sizes[0]]
ref = first["references"]
scale = ref["full"]["raw_score"] - ref["all_swa"]["raw_score"]
print(f"Search seed {first['settings']['seed']} (calibration samples drawn with the same seed); test: "
      f"{first['settings']['test']} (the same for every size). Test S^ = exact match + 0.01 answer "
      "log-probability, normalised; differences paired over test samples, 95% bootstrap interval "
      "(10000 resamples). Seconds: wall clock of the bosch-plus search on a 2-core machine.\n")
print("| ratio | depths | calib samples | bosch-plus calib S^ | bosch-plus test S^ | gate | ablation | "
      "bosch-plus vs best baseline | bosch-plus vs default size | evaluations | seconds |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for r in first["ratios"]:
    for d in sizes:
        b = row(d, "bosch-plus", r)
        base = [x for x in runs[d]["results"] if x["ratio"] == r and x["method"] in ("gate", "ablation")]
        best = max(base, key=lambda x: x["normalized"])
        g, a = ({x["method"]: f"{x['normalized']:.3f}" for x in base}.get(m, "-") for m in ("gate", "ablation"))
        vs_default = "(reference)" if d == default else ci(b["test_per_sample"], row(default, "bosch-plus", r)["test_per_sample"], scale)
        print(f"| {r} | {d} | {runs[d]['settings']['calibration_samples']} | {b['calibration_normalized']:.3f} | "
              f"{b['normalized']:.3f} | {g} | {a} | "
              f"{ci(b['test_per_sample'], best['test_per_sample'], scale)} vs {best['method']} | {vs_default} | "
              f"{b['evaluations']} | {b['seconds']:.0f} |")
PY
cat "$out/summary.md"
