#!/usr/bin/env bash
# How close a --like preset comes to its real graph: generates it at NODES nodes, then prints
# its average degree and edge homophily (numpy), METIS's edge cut at 2 to 32 parts, the test
# accuracy of OGB's MLP on the features alone (3 layers, hidden 256, dropout 0.5, lr 0.01,
# batch 4096, 15 epochs) and of the thesis's GraphSAGE-3 (hidden 256, fanouts 15,10,5 from the seeds, batch 1000,
# lr 0.001, dropout 0.5) at its best validation epoch of EPOCHS (default: 8 for products, 40 for
# papers100M, whose 1.1% training split makes few batches an epoch, 20 for arxiv).
#   bench/graph_calibration.sh products|papers100M|arxiv NODES [STRATA] [DATA_DIR] [EPOCHS]
set -euo pipefail
preset=$1 nodes=$2
strata=${3:-build/strata}
data=${4:-data}
case $preset in products) default_epochs=8 ;; arxiv) default_epochs=20 ;; *) default_epochs=40 ;; esac
epochs=${5:-$default_epochs}
out="$data/like-$preset-$nodes"
python=${PYTHON:-python3}
test -f "$out/meta.json" || "$strata" generate "$out" --like "$preset" --nodes "$nodes" --seed 1 > /dev/null
"$python" - "$out" <<'PY'
import json, sys
import numpy as np
d = sys.argv[1]
meta = json.load(open(d + '/meta.json'))
n = meta['num_nodes']
indptr = np.fromfile(d + '/graph/indptr.bin', dtype=np.uint64)
indices = np.fromfile(d + '/graph/indices.bin', dtype=np.uint32 if meta['node_id_bytes'] == 4 else np.uint64)
labels = np.fromfile(d + '/labels.bin', dtype=np.int32)
dst = np.repeat(np.arange(n), np.diff(indptr).astype(np.int64))
print(f"average degree {len(indices) / n:.1f}, edge homophily {np.mean(labels[dst] == labels[indices]):.3f}")
PY
for parts in 2 4 8 16 32; do
  "$strata" partition "$out" "$out-metis" --parts "$parts" --method metis --force --json |
    "$python" -c "import json,sys; r=json.load(sys.stdin); print('METIS', r['parts'], 'parts: cut', round(100 * r['edge_cut_ratio'], 2), '%, label balance', round(r['label_balance'], 3))"
done
rm -rf "$out-metis"
"$strata" train "$out" --model mlp --layers 3 --hidden 256 --batch-size 4096 --lr 0.01 \
  --dropout 0.5 --epochs 15 --feature-store memory --eval-point best --seed 1 2>&1 |
  sed -n 's/^final:/MLP:/p'
"$strata" train "$out" --model sage --layers 3 --hidden 256 --fanouts 5,10,15 \
  --eval-fanouts 5,10,15 --batch-size 1000 --lr 0.001 --dropout 0.5 --epochs "$epochs" \
  --feature-store memory --eval-point best --seed 1 2>&1 | sed -n 's/^final:/GraphSAGE-3:/p'
