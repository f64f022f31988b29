#!/usr/bin/env bash
# Training data of the default model (issue #5), all from the C++ task generator (train split).
# Usage: tools/train/make_data.sh [BOSCH] [OUTDIR]    (defaults: build/bosch, build-train/data)
# Phases of the curriculum read the samples whose length is in (L/2, L]:
#   128 : copy text (induction) + compact echo drill
#   256 : copy + drill (half NIAH wording) + one-needle NIAH-wording MQAR
#   512 : copy + drill + MQAR + the single-needle NIAH families
#   1024: every NIAH family (the multi-needle ones at 768 and 1024) + MQAR + drill + copy
set -euo pipefail
B=${1:-build/bosch}
D=${2:-build-train/data}
T=models/default/tokenizer.json
mkdir -p "$D"
g() { "$B" gen "$T" --train "$@" 2>/dev/null; }
g --suite copy  --lengths 128  --samples 16000 --seed 101 --jsonl "$D/copy128.jsonl"
g --suite drill --lengths 128  --samples 8000  --seed 102 --drill-density 24 --echo-share 0.6 --niah-wording-share 0 --jsonl "$D/drill128.jsonl"
g --suite copy  --lengths 256  --samples 4000  --seed 201 --jsonl "$D/copy256.jsonl"
g --suite drill --lengths 256  --samples 7000  --seed 202 --drill-density 12 --echo-share 0.3 --niah-wording-share 0.5 --jsonl "$D/drill256.jsonl"
g --suite mqar  --lengths 256  --samples 4000  --seed 203 --pairs 1 --queries 1 --jsonl "$D/mqar256.jsonl"
g --suite copy  --lengths 512  --samples 1500  --seed 301 --jsonl "$D/copy512.jsonl"
g --suite drill --lengths 512  --samples 3000  --seed 302 --drill-density 10 --echo-share 0.2 --niah-wording-share 0.5 --jsonl "$D/drill512.jsonl"
g --suite mqar  --lengths 512  --samples 3000  --seed 303 --pairs 3 --queries 2 --jsonl "$D/mqar512.jsonl"
g --suite niah:single_noise,single_text,single_uuid,passkey --lengths 512 --depths 11 --samples 50 --seed 304 --jsonl "$D/niah512.jsonl"
g --suite niah --lengths 1024 --depths 11 --samples 12 --seed 401 --jsonl "$D/niah1024.jsonl"
g --suite niah:multikey,multivalue,multiquery --lengths 768 --depths 11 --samples 12 --seed 402 --jsonl "$D/niah768.jsonl"
g --suite mqar  --lengths 1024 --samples 800   --seed 403 --pairs 6 --queries 4 --jsonl "$D/mqar1024.jsonl"
g --suite drill --lengths 1024 --samples 800   --seed 404 --drill-density 8 --echo-share 0.1 --niah-wording-share 0.5 --jsonl "$D/drill1024.jsonl"
g --suite copy  --lengths 1024 --samples 300   --seed 405 --jsonl "$D/copy1024.jsonl"
wc -l "$D"/*.jsonl | tail -1
