#!/usr/bin/env bash
# Whether the memory budget holds on a graph with hubs: each training path at a series of
# budgets, refused at start (with the budget it names) or finished (with its peak RSS, as the
# final metrics record gives it). Prints one Markdown table row per run.
#   bench/budget_sweep.sh [STRATA] [DATA_DIR]
set -euo pipefail
strata=${1:-build/strata}
data=${2:-data}
graph="$data/rmat-50k"
parts="$data/rmat-50k-p16"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

test -f "$graph/meta.json" ||
  "$strata" generate "$graph" --nodes 50000 --avg-degree 20 --feature-dim 256 --classes 8 \
    --graph rmat --seed 1 > /dev/null
test -f "$parts/meta.json" || "$strata" partition "$graph" "$parts" --parts 16 --hubs 0.01 > /dev/null

sweep() {
  local name=$1 dataset=$2 budgets=$3; shift 3
  for budget in $budgets; do
    local result
    if "$strata" train "$dataset" --epochs 2 --hidden 16 --batch-size 100 --memory-budget "$budget" \
        --metrics-out "$out/m.jsonl" "$@" > /dev/null 2> "$out/err"; then
      result="finished, peak RSS $(python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])][-1]; print(round(r["peak_rss_bytes"]/2**20), "MiB")' "$out/m.jsonl")"
    elif grep -q "^epoch" "$out/err"; then
      result="DIED AFTER TRAINING: $(tail -1 "$out/err")"
    else
      result="refused at start, names $(grep -o '\(to\|is\|at least\) [0-9.]* [KMG]iB' "$out/err" | tail -1 | grep -o '[0-9.]* [KMG]iB')"
    fi
    echo "| $name | $budget | $result |"
  done
}

echo "| path | budget | outcome |"
echo "| --- | --- | --- |"
sweep "sampled 10,10" "$graph" "32M 61.9M 128M" --fanouts 10,10 --eval-fanouts 10,10
sweep "full neighbourhoods" "$graph" "64M 256M 354M 512M" --fanouts=-1,-1 --eval-fanouts 10,10
sweep "GAT, LABOR 5,5" "$graph" "64M 256M 578M" --model gat --sampler labor --fanouts 5,5 \
  --eval-fanouts 5,5
sweep "layer-wise evaluation" "$graph" "32M 86.8M 128M" --fanouts 10,10 --eval layerwise
sweep "multistage partition" "$parts" "32M 84.8M 128M" --fanouts 10,10 --eval-fanouts 10,10 \
  --multistage partition
sweep "multistage pbs" "$parts" "32M 106M 128M" --fanouts 10,10 --eval-fanouts 10,10 \
  --multistage pbs
sweep "multistage lbs" "$graph" "32M 132M 160M" --fanouts 10,10 --eval-fanouts 10,10 \
  --multistage lbs
sweep "full graph (GCN)" "$graph" "8M 9.38M 32M" --full-graph --model gcn
