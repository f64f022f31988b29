#!/usr/bin/env bash
# Training data of the default model (issue #5), all from the C++ task generator (train split).
# Usage: tools/train/make_data.sh [BOSCH] [OUTDIR] [STAGE]
#   (defaults: build/bosch, build-train/data for stage 1, build-train/data2 for stage 2)
# Phases of the curriculum read the samples whose length is in (L/2, L].
# Stage 1 (from the induction warm start):
#   128 : copy text (induction) + compact echo drill
#   256 : copy + drill (half NIAH wording) + one-needle NIAH-wording MQAR
#   512 : copy + drill + MQAR + the single-needle NIAH families
#   1024: every NIAH family (the multi-needle ones at 768 and 1024) + MQAR + drill + copy
# Stage 2 (train.py --init-from the stage-1 weights; key-conditioned retrieval: mostly texts
# with several keyed needles, where only the key tells which needle answers; other seeds):
#   512 : 3-needle MQAR (2 questions) + the single-needle NIAH families
#   1024: every NIAH family, the multi-needle ones also at 768, 6-needle MQAR (4 questions), copy
set -euo pipefail
B=${1:-build/bosch}
STAGE=${3:-1}
D=${2:-build-train/data$([[ $STAGE == 2 ]] && echo 2)}
T=models/default/tokenizer.json
mkdir -p "$D"
g() { "$B" gen "$T" --train "$@" 2>/dev/null; }
if [[ $STAGE == 1 ]]; then
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
elif [[ $STAGE == 2 ]]; then
  g --suite mqar  --lengths 512  --samples 3000 --seed 503 --pairs 3 --queries 2 --jsonl "$D/mqar512.jsonl"
  g --suite niah:single_noise,single_text,single_uuid,passkey --lengths 512 --depths 11 --samples 20 --seed 504 --jsonl "$D/niah512.jsonl"
  g --suite niah --lengths 1024 --depths 11 --samples 20 --seed 601 --jsonl "$D/niah1024.jsonl"
  g --suite niah:multikey,multivalue,multiquery --lengths 768 --depths 11 --samples 20 --seed 602 --jsonl "$D/niah768.jsonl"
  g --suite mqar  --lengths 1024 --samples 1500 --seed 603 --pairs 6 --queries 4 --jsonl "$D/mqar1024.jsonl"
  g --suite copy  --lengths 1024 --samples 300  --seed 605 --jsonl "$D/copy1024.jsonl"
else
  echo "make_data.sh: STAGE must be 1 or 2, got '$STAGE'" >&2
  exit 2
fi
wc -l "$D"/*.jsonl | tail -1
