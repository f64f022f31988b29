#!/usr/bin/env bash
# `make demo`: the main job on the embedded default model (models/default): run the BOSCH
# search at rho = 0.75 (the paper's stages and ours), evaluate it on the held-out test split against
# the strongest static rankings, print the table and write the report (masks as SVG, per-layer sensitivity).
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
echo "demo: report (table, masks as SVG, per-layer sensitivity) in $out/"
