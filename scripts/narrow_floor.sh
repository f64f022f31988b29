#!/usr/bin/env bash
# What one 1024-token prefill costs at the testbed shape of issue #21 (28 layers x 8 KV heads),
# from the circuit's width (hidden 265, head dim 64) down to widths no retrieval circuit fits:
# random weights (`bosch make-random` with shape options), `bosch bench prefill`, best of 5.
# Prints a Markdown table; the issue's budget is 0.1 s per 1024-token sample on 2 cores (run it
# with BOSCH_THREADS=2 on a larger machine).
#   scripts/narrow_floor.sh [LAYERS] [KV_HEADS]
set -euo pipefail
[[ -n ${BOSCH:-} ]] && BOSCH=$(realpath "$BOSCH")
cd "$(dirname "$0")/.."
BOSCH=${BOSCH:-build/bosch}
layers=${1:-28}; kv=${2:-8}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "| query heads | head dim | hidden | FFN | F16 weights | prefill, 1024 tokens | linear layers |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
# query heads, head dim, hidden, FFN
for shape in "16 64 265 224" "16 32 160 224" "16 16 128 256" "16 16 64 128" "16 8 64 128" "16 4 64 128" \
             "8 16 128 256" "8 8 64 128"; do
  read -r q hd d ff <<< "$shape"
  "$BOSCH" make-random --arch qwen3 --like tiny --layers "$layers" --kv-heads "$kv" --heads "$q" --head-dim "$hd" \
    --hidden "$d" --ffn "$ff" --format hf --dtype f16 --out "$tmp/m" >/dev/null
  mb=$(python3 -c "import os,sys; print(f'{os.path.getsize(sys.argv[1]) / 1e6:.1f}')" "$tmp/m/model.safetensors")
  out=$(BOSCH_QUIET=1 "$BOSCH" bench prefill "$tmp/m" --tokens 1024 --repeats 5 --attn-n 1024 2>&1) ||
    { echo "$out" >&2; exit 1; }
  pre=$(sed -n 's/^prefill .*(\([0-9.]*\) s).*/\1/p' <<< "$out")
  lin=$(sed -n 's/^linear layers .*(\([0-9.]*\) s,.*/\1/p' <<< "$out")
  [[ -n $pre && -n $lin ]] || { echo "narrow_floor: cannot read the bench's output:" >&2; echo "$out" >&2; exit 1; }
  echo "| $q | $hd | $d | $ff | $mb MB | $pre s | $lin s |"
  rm -rf "$tmp/m"
done
