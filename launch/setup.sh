#!/usr/bin/env bash
# launch/setup.sh — installs atoll's system dependencies with apt and fetches
# the default model. Safe to run again: nothing present is fetched twice.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  openmpi-bin libopenmpi-dev     # processes, control plane, CPU collectives
  libhwloc-dev                   # topology
  libinih-dev                    # config files
  libjansson-dev                 # JSON
  libpcre2-dev libutf8proc-dev   # tokenizers
  libmicrohttpd-dev libcurl4-openssl-dev  # HTTP server and load generator
  python3 python3-venv           # test oracles run in a virtual environment
  clang libclang-rt-dev          # libFuzzer harnesses of the file parsers (ATOLL_FUZZ)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} system packages are installed"
else
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The default model (SmolLM2-135M-Instruct, GGUF Q4_1) into models/.
bash "$(dirname "$0")/fetch-model.sh"
