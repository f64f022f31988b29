#!/usr/bin/env bash
# Training data of the default model (issue #5), all from the C++ task generator (train split,
# so no key, value or haystack seed of the calib or test split is seen in training).
# Usage: tools/train/make_data.sh [BOSCH] [OUTDIR]   (defaults: build/bosch, build-train/data)
# The retrieval circuit is built, not trained (circuit_init.py); what trains is the filler
# language and the prompt templates around it, so the data is NIAH text, which is mostly
# haystack (the markov language, and the noise sentences of single_noise and passkey).
# Phases of the curriculum read the samples whose length is in (L/2, L]:
#   512 : the families that fit in 512 tokens (single needle, passkey)
#   1024: every family (the multi-needle ones also at 768)
set -euo pipefail
B=${1:-build/bosch}
D=${2:-build-train/data}
T=models/default/tokenizer.json
mkdir -p "$D"
rm -f "$D"/*.jsonl
g() { "$B" gen "$T" --train "$@" 2>/dev/null; }
g --suite niah:single_noise,single_text,single_uuid,passkey --lengths 512 --depths 11 --samples 100 --seed 304 --jsonl "$D/niah512.jsonl"
g --suite niah:multikey,multivalue,multiquery --lengths 768 --depths 11 --samples 10 --seed 402 --jsonl "$D/niah768.jsonl"
g --suite niah --lengths 1024 --depths 11 --samples 10 --seed 401 --jsonl "$D/niah1024.jsonl"
wc -l "$D"/*.jsonl | tail -1
