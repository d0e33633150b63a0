#!/usr/bin/env bash
# Test accuracy of GraphSAGE with ordinary neighbour sampling against multistage training on
# GAP + hub and random partitions, partition-based sampling (PBS: GAP + hubs with the halo and
# historical embeddings) and large-batch sampling (LBS), mean ± std over seeds, on a
# dataset imported from .npy (e.g. datasets/cora.npz). Prints one JSON line per
# configuration.
#   [HUBS=0.05] bench/multistage_accuracy.sh NPY_DIR [PARTS] [MACRO_BATCH] [SEEDS] [LBS_MACRO_BATCH]
set -euo pipefail
npy=$1
parts=${2:-8}
macro=${3:-2}
seeds=${4:-5}
lbs_macro=${5:-2}
strata=${STRATA:-build/strata}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$strata" import "$work/in" --npy "$npy" > /dev/null
"$strata" partition "$work/in" "$work/gap" --parts "$parts" --hubs "${HUBS:-0.05}" > /dev/null
"$strata" partition "$work/in" "$work/random" --parts "$parts" --method random > /dev/null
model=(--model sage --layers 2 --hidden 64 --fanouts 10,10 --batch-size 32 --epochs 30
       --lr 0.01 --dropout 0.5 --weight-decay 5e-4 --row-normalize --feature-store memory
       --memory-budget 512M --eval-every 0)

evaluate() {
  local name=$1; shift
  local accs=()
  for seed in $(seq 1 "$seeds"); do
    "$strata" train "$@" "${model[@]}" --seed "$seed" --metrics-out "$work/m.jsonl" > /dev/null
    accs+=("$(tail -1 "$work/m.jsonl" | python3 -c 'import json,sys; print(json.load(sys.stdin)["test_acc"])')")
  done
  python3 -c "
import json, statistics, sys
a = [float(x) for x in sys.argv[2:]]
print(json.dumps({'run': sys.argv[1], 'test_acc_mean': round(statistics.mean(a), 4),
                  'test_acc_std': round(statistics.stdev(a), 4), 'seeds': len(a)}))" "$name" "${accs[@]}"
}

evaluate neighbour-sampling "$work/gap"
evaluate "multistage-gap-hubs-k${parts}-b${macro}" "$work/gap" --multistage partition --macro-batch "$macro"
evaluate "pbs-gap-hubs-k${parts}-b${macro}" "$work/gap" --multistage pbs --macro-batch "$macro"
evaluate "multistage-random-k${parts}-b${macro}" "$work/random" --multistage partition --macro-batch "$macro"
evaluate "multistage-lbs-m${lbs_macro}" "$work/in" --multistage lbs --macro-batch "$lbs_macro"
