#!/usr/bin/env bash
# Per-dtype speed and memory at a real Qwen3 shape (the README's dtype tables): for each dtype,
# writes a random GGUF (`bosch make-random`, streamed), runs `bosch bench weights` (peak RSS with
# a PROMPT-token prefill vs file + KV cache; decode GB/s vs the memory bandwidth measured in the
# same run) and `bosch bench prefill` (linear-layer GFLOP/s vs the sgemm peak measured in the
# same run), then deletes the file. Usage:
#   scripts/bench_dtypes.sh BOSCH LIKE DIR "q4_k_m q8_0 bf16" [PROMPT] [PREFILL_TOKENS]
set -euo pipefail
bosch=$1 like=$2 dir=$3 dtypes=$4 prompt=${5:-1024} prefill=${6:-256}
mkdir -p "$dir"
for t in $dtypes; do
  f="$dir/qwen3-$like-$t.gguf"
  echo "=== $like $t"
  /usr/bin/time -f "make-random: %e s, peak RSS %M KiB" "$bosch" make-random --arch qwen3 --like "$like" \
    --format gguf --dtype "$t" --out "$f"
  ls -l "$f"
  "$bosch" bench weights "$f" --tokens "$prompt" --decode 8 --bandwidth-mib 1024
  "$bosch" bench prefill "$f" --tokens "$prefill" --repeats 1 --attn-n 2048
  rm -f "$f"
done
