#!/usr/bin/env bash
# `make demo`: the main job on the embedded default model (models/default): run the BOSCH
# search at rho = 0.75 (the paper's stages and ours), evaluate it on the held-out test split against
# the strongest static rankings, print the table and write the report (masks as SVG, per-layer sensitivity);
# then the same methods on the Qwen3-8B-shaped search simulator.
set -euo pipefail
BOSCH=$(realpath "${1:-build/bosch}")
cd "$(dirname "$0")/.."
out=${DEMO_OUT:-build/demo-report}
model=models/default
[[ -f $model/model.safetensors ]] || { echo "demo: $model/model.safetensors is missing" >&2; exit 1; }
families=niah:single_noise,single_text,multikey,passkey
lengths=1024
"$BOSCH" info "$model"
echo
"$BOSCH" compare "$model" --ratios 0.75 --methods bosch,bosch-plus,ablation,gate,locality \
  --objective "$families" --lengths "$lengths" --depths 5 --calib-solved-only --test-depths 5 --report "$out"
echo
# The same methods on the search simulator at Qwen3-8B scale (288 KV heads, redundant retrieval
# paths; docs/simulator.md): 20 seeded instances, seconds.
"$BOSCH" compare --objective synthetic:qwen3-8b --instances 20 --ratios 0.75,0.875 \
  --methods bosch,bosch-plus,ablation,gate --report "$out/simulator"
echo
echo "demo: report (table, masks as SVG, per-layer sensitivity) in $out/"
