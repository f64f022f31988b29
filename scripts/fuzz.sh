#!/usr/bin/env bash
# Runs each libFuzzer harness in turn for SECONDS, in-process (one process, no -jobs/-workers
# fork mode, which would also write fuzz-N.log files into the working directory).
# Usage: scripts/fuzz.sh BUILD_DIR SECONDS [harness...]   (FUZZ_FLAGS: extra libFuzzer flags)
# Corpora grow in BUILD_DIR/fuzz-corpus/<harness> (seeded from tests/fuzz/seeds/<harness>, the
# repository's fixtures and tests/data/malformed); findings go to BUILD_DIR/fuzz-findings/<harness>/.
# Exit status 1 when any harness found something (the crashing input is named in the log).
set -uo pipefail
cd "$(dirname "$0")/.."
build=$1 seconds=$2; shift 2
names=("$@")
((${#names[@]})) || names=(gguf safetensors config tokenizer_json mask_file duo journal longbench objective_spec cli_numbers)
stories=tests/data/stories260K/stories260K.gguf

seed() {  # seed HARNESS DIR: copies the seed files of one harness into DIR
  local n=$1 d=$2
  cp -f tests/fuzz/seeds/"$n"/* "$d"/ 2>/dev/null
  case $n in
    gguf) cp -f "$stories" "$d"/ ;;
    safetensors) cp -f tests/data/qwen3_tiny/model.safetensors "$d"/ ;;
    config) cp -f tests/data/qwen3_tiny/config.json "$d"/qwen3_tiny.json
            cp -f models/default/config.json "$d"/default.json
            cp -f tests/data/malformed/config_*.json "$d"/ 2>/dev/null ;;
    tokenizer_json)  # tokenizer.json, NUL, tokenizer_config.json
      for m in tests/data/qwen3_tiny models/default; do
        { cat "$m"/tokenizer.json; printf '\0'; cat "$m"/tokenizer_config.json; } > "$d/$(basename "$m").tok"
      done
      cp -f tests/data/malformed/tokenizer_*.json "$d"/ 2>/dev/null ;;
    mask_file) cp -f docs/results/stories260K-compare/masks/bosch-r0.5.json "$d"/
               cp -f tests/data/malformed/mask_*.json "$d"/ 2>/dev/null ;;
    longbench) cp -f tests/data/longbench/small/*.jsonl tests/data/longbench/bad/*.jsonl "$d"/ ;;
    objective_spec) printf '%s' synthetic:4x8 > "$d"/planted; printf '%s' synthetic:4x8:7 > "$d"/seeded
                    printf '%s' synthetic:qwen3-8b:3 > "$d"/shape; printf '%s' niah:single_noise > "$d"/niah ;;
    cli_numbers) printf '%s' 42 > "$d"/int; printf '%s' -7 > "$d"/neg; printf '%s' 1.5e-3 > "$d"/float
                 printf '%s' 18446744073709551615 > "$d"/max ;;
  esac
  return 0
}

failed=()
for n in "${names[@]}"; do
  bin=$build/fuzz_$n
  [[ -x $bin ]] || { echo "fuzz: $bin is missing (make fuzz builds it)" >&2; exit 2; }
  corpus=$build/fuzz-corpus/$n findings=$build/fuzz-findings/$n
  mkdir -p "$corpus" "$findings"
  seed "$n" "$corpus"
  log=$build/fuzz-$n.log
  echo "fuzz: $n for ${seconds}s (log $log)"
  # -rss_limit_mb / -malloc_limit_mb: a reader that allocates by a count from the file is a finding.
  # shellcheck disable=SC2086
  "$bin" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -max_len=1100000 -print_final_stats=1 -artifact_prefix="$findings/" ${FUZZ_FLAGS:-} >"$log" 2>&1
  rc=$?
  grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "$log" | tail -1 | sed "s/^/fuzz: $n: /"
  grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' "$log" | sed "s/^/fuzz: $n: /"
  if ((rc != 0)) || ls "$findings"/* >/dev/null 2>&1; then
    echo "fuzz: $n: FINDING (exit $rc): $(ls "$findings" | head -3)" >&2
    grep -E 'ERROR|SUMMARY|fuzz: non-bosch' "$log" | head -5 >&2
    failed+=("$n")
  fi
done
((${#failed[@]} == 0)) || { echo "fuzz: findings in: ${failed[*]}" >&2; exit 1; }
echo "fuzz: no findings"
