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
  for seed in ${SEEDS:-1 1001}; do
    echo "== $shape, instances $seed..$((seed + instances - 1))" >&2
    "$BOSCH" compare --objective "synthetic:$shape:$seed" --instances "$instances" \
      --ratios 0.25,0.5,0.75,0.875 --methods "${METHODS:-all}" --report "$out/$shape-s$seed" > /dev/null
  done
done
echo "compare_simulator: tables in $out/*/report.md" >&2
# One summary table over every shape and seed set: ours and the paper's stages vs the best baseline.
python3 - "$out" <<'PY' > "$out/summary.md"
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
print("| shape | instances | ratio | best baseline (test S^) | bosch (paper's stages) | bosch - best baseline [95% CI] | ls (equal budget) | bosch - ls [95% CI] | bosch-plus (ours) | bosch-plus - best baseline [95% CI] | evaluations bosch / bosch-plus |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
shapes = ["qwen3-1.7b", "qwen3-8b", "qwen3-14b", "qwen3-30b-a3b"]
def order(p):
    shape, seed = p.parent.name.rsplit("-s", 1)
    return (shapes.index(shape) if shape in shapes else len(shapes), shape, int(seed))
def ci(v):
    return f'{v["diff"]:+.3f} [{v["ci95"][0]:+.3f}, {v["ci95"][1]:+.3f}]'
for d in sorted(out.glob("*/compare.json"), key=order):
    j = json.loads(d.read_text())
    rows = {(r["method"], r["ratio"]): r for r in j["results"]}
    seeds = f'{j["first_seed"]}..{j["first_seed"] + j["instances"] - 1}'
    for ratio in j["ratios"]:
        plus, paper, ls = rows[("bosch-plus", ratio)], rows[("bosch", ratio)], rows[("ls", ratio)]
        v = plus["vs_best_baseline"]
        base = rows[(v["baseline"], ratio)]
        print(f'| {j["simulator"]["shape"]} | {seeds} | {ratio} | {v["baseline"]} ({base["test_normalized"]:.3f}) | '
              f'{paper["test_normalized"]:.3f} | {ci(paper["vs_best_baseline"])} | {ls["test_normalized"]:.3f} | '
              f'{ci(paper["vs_ls"])} | {plus["test_normalized"]:.3f} | {ci(v)} | '
              f'{paper["evaluations"]:.0f} / {plus["evaluations"]:.0f} |')
PY
echo "compare_simulator: summary in $out/summary.md" >&2
