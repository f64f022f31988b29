#!/usr/bin/env bash
# The gates of the two-path testbed (issue #21), measured by `bosch eval` on the test split:
# full, all-SWA, each retrieval head of chains A and B alone SWA, the pairs that cut both
# chains, all six together, and the shared (single) counting heads. Heads from circuit.json.
#   scripts/deep_gates.sh [MODEL] [DEPTHS] [W] [S]     (prints a Markdown table)
set -euo pipefail
cd "$(dirname "$0")/.."
BOSCH=${BOSCH:-build/bosch}
model=${1:-models/deep}; depths=${2:-3}; W=${3:-64}; S=${4:-4}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
common=(--suite niah --lengths 1024 --depths "$depths" --samples 1 --split test)
em() { python3 -c "import json,sys; print(f\"{json.load(open(sys.argv[1]))['exact_match']:.3f}\")" "$1"; }
# one line of "name<TAB>heads" per set (heads L.H,L.H: `--mask heads:...` makes them SWA)
python3 - "$model/circuit.json" > "$tmp/sets.txt" <<'PY'
import json, sys
info = json.load(open(sys.argv[1]))
h = info["heads"]; sh = info["shared_heads"]
sets = [(k, [v]) for k, v in h.items()]
sets += [("SEL+SEL_B", [h["SEL"], h["SEL_B"]]), ("ASEL+ASEL_B", [h["ASEL"], h["ASEL_B"]]),
         ("COPY+COPY_B", [h["COPY"], h["COPY_B"]]), ("SEL+COPY_B", [h["SEL"], h["COPY_B"]]),
         ("COPY+SEL_B", [h["COPY"], h["SEL_B"]]), ("all six", list(h.values())),
         ("AR/AR2 (shared)", [sh["AR_NC"][0]]), ("NC (shared)", [sh["AR_NC"][1]]),
         ("LC/AC (shared)", sh["LC_AC"])]
for i, (name, heads) in enumerate(sets):
    print(f"{i}\t{name}\t{','.join(heads)}")
PY
BOSCH_QUIET=1 "$BOSCH" eval "$model" "${common[@]}" --json "$tmp/full.json" >/dev/null
BOSCH_QUIET=1 "$BOSCH" eval "$model" "${common[@]}" --mask all-swa --window "$W" --sinks "$S" --json "$tmp/swa.json" >/dev/null
full=$(em "$tmp/full.json")
echo "NIAH exact match, all 8 families, 1024 tokens, $depths depths, test split (W=$W, S=$S):"
echo
echo "| SWA heads | | exact match | cost vs full |"
echo "| --- | --- | ---: | ---: |"
echo "| none (full attention) | | $full | |"
echo "| every KV head | | $(em "$tmp/swa.json") | $(python3 -c "print(f'{$full-$(em "$tmp/swa.json"):.3f}')") |"
while IFS=$'\t' read -r i name heads; do
  BOSCH_QUIET=1 "$BOSCH" eval "$model" "${common[@]}" --mask "heads:$heads" --window "$W" --sinks "$S" --json "$tmp/r$i.json" >/dev/null
  e=$(em "$tmp/r$i.json")
  echo "| $name | $heads | $e | $(python3 -c "print(f'{$full-$e:.3f}')") |"
done < "$tmp/sets.txt"
