#!/usr/bin/env bash
# Installs the Debian packages Strata needs to build, test and benchmark. Idempotent and quiet
# when everything is present; this is the one place where dependencies are named.
# `setup.sh reference` adds the PyTorch reference tooling (tools/reference/), which neither
# building nor `make test` needs.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  liburing-dev          # io_uring submission/completion rings
  libopenblas-dev       # GEMM for the dense layers
  libcli11-dev          # command-line parsing
  libfmt-dev            # formatting of messages and reports
  nlohmann-json3-dev    # meta.json and JSON reports
  libxxhash-dev         # per-file checksums in meta.json
  libgtest-dev libgmock-dev  # unit and CLI tests
  libbenchmark-dev      # micro-benchmarks in bench/
  libmetis-dev          # METIS, the partitioning baseline GAP is compared against
  util-linux            # unshare, for the disk-full test in a private tmpfs
)
if [ "${1:-}" = reference ]; then
  packages+=(python3-torch)  # the reference recipes' PyTorch (CPU), with numpy
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
