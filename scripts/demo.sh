#!/usr/bin/env bash
# `make demo`: the main job on the embedded default model.
set -euo pipefail
BOSCH=${1:-build/bosch}
cd "$(dirname "$0")/.."
if [[ -f models/default/config.json ]]; then
  "$BOSCH" info
  "$BOSCH" generate --prompt "The grass is green." --max-tokens 64 --temperature 0
else
  echo "demo: the embedded default model (models/default) is not trained yet; running stories260K instead" >&2
  m=../shared/models/stories260K.gguf
  [[ -f $m ]] || { echo "demo: $m not found either" >&2; exit 1; }
  "$BOSCH" info "$m"
  "$BOSCH" generate "$m" --temperature 0 --max-tokens 120
fi
