#!/usr/bin/env bash
# Test accuracy of full-graph training (--full-graph) beside the mini-batch path with full
# neighbourhoods and one batch of every training node (the same objective), mean ± std over
# seeds, for GraphSAGE (DGL's full-graph example's recipe), GCN (Kipf's) and GAT (the GAT
# paper's), on a dataset imported from .npy (e.g. datasets/cora.npz). Prints one JSON line per
# model and path.
#   bench/full_graph_accuracy.sh NPY [SEEDS]
set -euo pipefail
npy=$1
seeds=${2:-5}
strata=${STRATA:-build/strata}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$strata" import "$work/in" --npy "$npy" > /dev/null
train=$(python3 -c "import json; print(json.load(open('$work/in/meta.json'))['split_sizes']['train'])")
sage=(--model sage --hidden 16 --dropout 0.5 --input-dropout 0.5 --lr 0.01 --weight-decay 5e-4)
gcn=(--model gcn --hidden 16 --dropout 0.5 --input-dropout 0.5 --bias false --lr 0.01
     --weight-decay 5e-4 --weight-decay-scope first-layer)
gat=(--model gat --hidden 8 --heads 8 --out-heads 1 --activation elu --dropout 0.6
     --input-dropout 0.6 --attention-dropout 0.6 --lr 0.005 --weight-decay 5e-4)
common=(--epochs 200 --row-normalize --eval-every 0 --memory-budget 512M)
minibatch=(--fanouts=-1,-1 --batch-size "$train" --feature-store memory)

evaluate() {
  local model=$1 path=$2; shift 2
  local accs=()
  for seed in $(seq 1 "$seeds"); do
    "$strata" train "$work/in" "$@" "${common[@]}" --seed "$seed" --metrics-out "$work/m.jsonl" \
        > /dev/null 2>&1
    accs+=("$(tail -1 "$work/m.jsonl" | python3 -c 'import json,sys; print(json.load(sys.stdin)["test_acc"])')")
  done
  python3 - "$model" "$path" "$(basename "$npy")" "${accs[@]}" <<'PY'
import json, statistics, sys
model, path, dataset, *accs = sys.argv[1:]
accs = [float(a) for a in accs]
print(json.dumps({"dataset": dataset, "model": model, "path": path,
                  "test_acc_mean": round(statistics.mean(accs), 4),
                  "test_acc_std": round(statistics.stdev(accs), 4) if len(accs) > 1 else 0.0,
                  "seeds": len(accs)}))
PY
}

evaluate sage mini-batch "${sage[@]}" "${minibatch[@]}"
evaluate sage full-graph "${sage[@]}" --full-graph
evaluate gcn mini-batch "${gcn[@]}" "${minibatch[@]}"
evaluate gcn full-graph "${gcn[@]}" --full-graph
evaluate gat mini-batch "${gat[@]}" "${minibatch[@]}"
evaluate gat full-graph "${gat[@]}" --full-graph
