#!/usr/bin/env bash
# Installs the Debian packages Strata needs to build, test and benchmark. Idempotent and quiet
# when everything is present; this is the one place where dependencies are named.
# The Python package builds against Debian's python3 (/usr/bin/python3).
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  liburing-dev          # io_uring submission/completion rings
  libopenblas-dev       # GEMM for the dense layers
  libcli11-dev          # command-line parsing
  libfmt-dev            # formatting of messages and reports
  nlohmann-json3-dev    # meta.json and JSON reports
  libxxhash-dev         # per-file checksums in meta.json
  zlib1g-dev            # inflating the DEFLATE members of .npz archives (import --features x.npz)
  libgtest-dev libgmock-dev  # unit and CLI tests
  libbenchmark-dev      # micro-benchmarks in bench/
  libmetis-dev          # METIS, the partitioning baseline GAP is compared against
  libgraphblas-dev      # SuiteSparse:GraphBLAS, the SpGEMM baseline of bench/ (linked there only)
  libopenmpi-dev openmpi-bin  # data-parallel `mpirun -np N strata train` (MPI_Allreduce)
  util-linux            # unshare, for the disk-full test in a private tmpfs
  # make fuzz: clang with libFuzzer and the sanitizer runtimes (libclang_rt.fuzzer is in
  # libclang-rt-14-dev, only recommended by clang), llvm-symbolizer for readable stacks.
  clang libclang-rt-14-dev llvm
  python3-dev pybind11-dev python3-numpy  # the Python package (python/strata)
  python3-venv          # make python's .venv
  python3-pytest        # the Python package's tests
  python3-matplotlib    # python3 -m strata.report's plots
  # PyTorch (CPU), for tests and tools only, never for strata itself: the examples' training
  # loops that the Python tests run, and the reference recipes (tools/reference/).
  python3-torch
)

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
