#!/usr/bin/env bash
# Installs the Debian bookworm packages a make target needs; a no-op when all are present.
set -euo pipefail
# Groups, so each make target installs only what it uses: `build` (the library, CLI and test
# executables; MPI too, found at configure time), `test` (+ node/npm for the JavaScript references
# and consumers, numpy and PyTorch for the script checks and tools/train), `fuzz` (+ clang).
group=${1:-build}
pkgs=(g++ cmake make pkg-config libopenblas-dev nlohmann-json3-dev libcli11-dev libpcre2-dev libfmt-dev libicu-dev
      libgtest-dev libgmock-dev libbenchmark-dev
      libopenmpi-dev openmpi-bin)  # MPI: a search spread over ranks (docs/mpi.md)
case $group in
  build) ;;
  test) pkgs+=(nodejs npm python3-numpy python3-torch) ;;
  fuzz) pkgs+=(clang libclang-rt-14-dev) ;;  # clang + libFuzzer: make fuzz (tests/fuzz)
  *) echo "install-deps: unknown group '$group' (expected build, test or fuzz)" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node/npm may come from elsewhere (e.g. nodesource); accept any working binary.
if command -v node >/dev/null && command -v npm >/dev/null; then
  tmp=(); for p in "${missing[@]}"; do [[ $p == nodejs || $p == npm ]] || tmp+=("$p"); done
  missing=("${tmp[@]+"${tmp[@]}"}")
fi
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  sudo=""; [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
