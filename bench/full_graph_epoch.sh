#!/usr/bin/env bash
# Full-graph GCN epochs three ways in one run, so that the disk's drift affects them alike:
# everything resident (in-memory), the RoBW schedule out of core within BUDGET, and AIRES's
# MaxMemory baseline within the same BUDGET (equal resident shares of the adjacency and the
# features, the rest read synchronously); and the
# smallest budget each runs in (AIRES Table III's analogue): the in-memory run's charged peak,
# and the smallest budget the RoBW plan accepts (its refusal of a 1 MiB budget names it).
# With SMALL_BUDGET (several, comma-separated), RoBW runs once more within each (small enough,
# the N-row intermediates are row-blocked on disk too, and smaller still the propagation input
# is column-sliced). MODEL (gcn, sage or gat) and HIDDEN (16; per head for GAT, whose HEADS
# are 8 with ELU between layers) in the environment pick the model.
# Prints one JSON line per run.
#   [MODEL=sage] [HIDDEN=64] bench/full_graph_epoch.sh DATASET BUDGET [EPOCHS] [STRATA] [SMALL_BUDGET]
set -euo pipefail
dataset=$1
budget=$2
epochs=${3:-3}
strata=${4:-build/strata}
small_budget=${5:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
model=(--full-graph --model "${MODEL:-gcn}" --hidden "${HIDDEN:-16}" --epochs "$epochs" --eval-every 0 --lr 0.01
       --input-dropout 0.5 --row-normalize --weight-decay 5e-4 --weight-decay-scope first-layer
       --bias false --seed 1)
if [ "${MODEL:-gcn}" = gat ]; then model+=(--heads "${HEADS:-8}" --activation elu); fi

run() {
  local name=$1; shift
  "$strata" train "$dataset" "${model[@]}" "$@" --metrics-out "$out/$name.jsonl" \
    > /dev/null 2> "$out/$name.err"
  python3 - "$name" "$out/$name.jsonl" "$out/$name.err" "$dataset" <<'PY'
import json, sys
name, path, err, dataset = sys.argv[1:5]
records = [json.loads(line) for line in open(path)]
epochs = [r for r in records if r["event"] == "epoch"]
final = records[-1]
files = json.load(open(dataset + "/meta.json"))["files"]
a_x = sum(f["bytes"] for k, f in files.items() if k.startswith(("graph/", "features")))
print(json.dumps({
    "run": name, "plan": open(err).readline().strip(),
    "epoch_time_s": [round(r["time_s"], 2) for r in epochs],
    "train_loss": [round(r["train_loss"], 5) for r in epochs],
    "disk_mb": [round(r["disk_bytes"] / 1e6) for r in epochs],
    "scratch_written_mb": [round(r.get("scratch_bytes_written", 0) / 1e6) for r in epochs],
    "stall_s": [round(r.get("stall_s", 0), 2) for r in epochs],
    "test_acc": final["test_acc"],
    "budget_mb": round(final["memory_budget_bytes"] / 2**20),
    "budget_peak_mb": round(final["budget_peak_bytes"] / 2**20),
    "peak_rss_mb": round(final["peak_rss_bytes"] / 2**20),
    "adjacency_plus_features_mb": round(a_x / 2**20),
}))
PY
}

run in-memory --memory-budget 20G
run robw --memory-budget "$budget"
run maxmemory --memory-budget "$budget" --full-graph-max-memory
IFS=, read -ra small_budgets <<< "$small_budget"
for small in "${small_budgets[@]}"; do run "robw-$small" --memory-budget "$small"; done
smallest=$("$strata" train "$dataset" "${model[@]}" --memory-budget 1M 2>&1 |
  sed -n 's/.*the smallest budget that works is //p' || true) 
echo "{\"run\": \"robw-smallest-budget\", \"smallest_budget\": \"$smallest\"}"
