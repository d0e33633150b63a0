#!/usr/bin/env bash
# One GPU session's measurements, on a machine that has CUDA, PyTorch (with torch_geometric),
# CMake and a C++ compiler but none of our Debian packages and no network (the device machines
# some sessions are lent). It builds the program and the Python package against .deb files
# carried beside the tree, unpacked into a private prefix rather than over the machine's own
# libraries; checks the examples on CUDA with Cora; then runs bench/python/gpu_feed_bench.py on
# `make run`'s graph, generated there.
#
#   bench/python/gpu_session.sh --download DEBS   # here, on Debian 12: fetch the .debs into DEBS
#   bench/python/gpu_session.sh DEBS OUT [MAX_BATCHES [EPOCH_SECONDS]]   # there, into OUT
#
# There, GPU_CACHE_SHARES (0,0.25,1), MEMMAP_PAGE_CACHE (bytes, 3 GiB; 0: unlimited),
# FEED_RUNS (the gpu_feed_bench runs, one invocation per word: "strata resident,memmap"; a
# multistage-partition run partitions the graph first), REUSE (the multistage runs', 1),
# BUDGET (Strata's host budget, 3G) and EXAMPLES=0 (skip the Cora checks) change what runs.
#
# The packages are the part of scripts/setup.sh that the program and the Python package link,
# with the runtime libraries those pull in.
set -euo pipefail

packages=(liburing-dev liburing2 libopenblas-dev libopenblas-pthread-dev libopenblas0-pthread
          libgfortran5 libquadmath0 libcli11-dev libfmt-dev libfmt9 nlohmann-json3-dev
          libxxhash-dev libxxhash0 zlib1g-dev zlib1g libmetis-dev libmetis5 pkgconf-bin
          libpkgconf3)

if [ "${1:-}" = "--download" ]; then
  mkdir -p "$2"
  (cd "$2" && apt-get download "${packages[@]}")
  exit 0
fi

debs=$(realpath "$1")
out=$(realpath "$2")
max_batches=${3:-10}
epoch_seconds=${4:-40}
shares=${GPU_CACHE_SHARES:-0,0.25,1}
page_cache=${MEMMAP_PAGE_CACHE:-$((3 << 30))}  # 0: the memmap run's page cache unlimited
root=$(cd "$(dirname "$0")/../.." && pwd)
prefix=${STRATA_DEPS_PREFIX:-/opt/strata-deps}
build=$root/build-gpu
data=$root/data
mkdir -p "$out" "$data"
cd "$root"

echo "== machine"
nvidia-smi -L || true
nproc; free -g | head -2; df -hT "$data" | tail -1
g++ --version | head -1; cmake --version | head -1
python3 -c 'import sys, torch; print(sys.version.split()[0], torch.__version__, torch.cuda.is_available())'

echo "== prefix $prefix"
mkdir -p "$prefix"
for f in "$debs"/*.deb; do dpkg -x "$f" "$prefix"; done
# dpkg -x runs no maintainer scripts: repoint the absolute links into the prefix and make the
# links that update-alternatives would (OpenBLAS's library and pkg-config file).
find "$prefix" -type l | while read -r link; do
  target=$(readlink "$link")
  case "$target" in /*) ln -sfn "$prefix$target" "$link" ;; esac
done
lib=$prefix/usr/lib/x86_64-linux-gnu
ln -sfn openblas-pthread/libopenblas.so.0 "$lib/libopenblas.so.0"
ln -sfn openblas-pthread/libopenblas.so "$lib/libopenblas.so"
ln -sfn ../openblas-pthread/pkgconfig/openblas.pc "$lib/pkgconfig/openblas.pc"
export PKG_CONFIG_LIBDIR=$lib/pkgconfig:$prefix/usr/share/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=$prefix
export LD_LIBRARY_PATH=$lib:$lib/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

echo "== build"
start=$SECONDS
pybind11_dir=$(python3 -m pybind11 --cmakedir 2>/dev/null || true)  # pip's pybind11, if any
if ! { cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTRATA_TESTS=OFF \
         -DCMAKE_PREFIX_PATH="$prefix/usr" -DPKG_CONFIG_EXECUTABLE="$prefix/usr/bin/pkgconf" \
         -DPython_EXECUTABLE="$(command -v python3)" \
         ${pybind11_dir:+-Dpybind11_DIR="$pybind11_dir"} &&
       cmake --build "$build" -j "$(nproc)" --target strata strata_python; } \
     >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"
  exit 1
fi
echo "built in $((SECONDS - start)) s"
export PYTHONPATH=$build/python PYTHONUNBUFFERED=1

# A stage that fails is reported and the next one runs: one lease is all a session gets.
if [ "${EXAMPLES:-1}" = 1 ]; then
echo "== examples on CUDA, Cora"
test -f "$data/cora/meta.json" || "$build/strata" import "$data/cora" --npy datasets/cora.npz >/dev/null
python3 examples/train_sage.py "$data/cora" --device cuda --epochs 30 --feature-store direct \
  >"$out/train_sage_cora.txt" 2>&1 || echo "train_sage.py failed"
tail -4 "$out/train_sage_cora.txt"
python3 examples/train_pyg.py "$data/cora" --model sage --device cuda --epochs 100 \
  >"$out/train_pyg_cora.txt" 2>&1 || echo "train_pyg.py failed"
tail -3 "$out/train_pyg_cora.txt"
fi

echo "== make run's graph"
start=$SECONDS
test -f "$data/sbm-4m/meta.json" || "$build/strata" generate "$data/sbm-4m" --nodes 4000000 \
  --avg-degree 10 --feature-dim 256 --classes 16 --train-ratio 0.02 --val-ratio 0.005 \
  --test-ratio 0.005 --seed 1 --memory-budget 1G >/dev/null
echo "generated in $((SECONDS - start)) s"

# A 3 GiB host budget, not 1 GiB: a batch's input rows are 331 MiB here, and the pinned region
# must hold the batches in flight (prefetch 2, plus 2) and one more. The memmap run gets as much.
echo "== gpu_feed_bench, first $max_batches batches or ${epoch_seconds} s of each epoch"
for runs in ${FEED_RUNS:-strata resident,memmap}; do
  if [[ $runs == *multistage-partition* ]] && ! test -f "$data/sbm-4m-p64/meta.json"; then
    start=$SECONDS
    "$build/strata" partition "$data/sbm-4m" "$data/sbm-4m-p64" --parts 64 \
      --memory-budget 8G >/dev/null || echo "partition failed"
    echo "partitioned in $((SECONDS - start)) s"
  fi
  timeout 420 python3 bench/python/gpu_feed_bench.py "$data/sbm-4m" --device cuda --epochs 2 \
    --budget "${BUDGET:-3G}" --gpu-cache-shares "$shares" --runs $runs \
    --max-batches "$max_batches" \
    --epoch-seconds "$epoch_seconds" --memmap-page-cache "$page_cache" \
    --partitioned "$data/sbm-4m-p64" --reuse "${REUSE:-1}" \
    >"$out/gpu_feed_bench_${runs%%,*}.jsonl" 2>&1 || echo "gpu_feed_bench --runs $runs failed"
  cat "$out/gpu_feed_bench_${runs%%,*}.jsonl"
done
