#!/usr/bin/env bash
# Epoch time of the three ways to train on `make run`'s graph, in one run so that the disk's
# drift affects them alike: features in memory (the ceiling), today's direct store behind
# the cache, multistage macro-batches of a GAP-partitioned copy (alone, and with their halo
# and historical embeddings: PBS) and large-batch sampling (LBS)
# — all but the first within a 1 GiB budget, a quarter of the feature bytes. Prints one JSON
# line per run.
#   bench/multistage_epoch.sh [STRATA] [DATASET] [EPOCHS]
set -euo pipefail
strata=${1:-build/strata}
dataset=${2:-data/sbm-4m}
epochs=${3:-2}
parts=${PARTS:-256}
partitioned="${dataset}-p${parts}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

test -f "$partitioned/meta.json" ||
  "$strata" partition "$dataset" "$partitioned" --parts "$parts" --hubs 0.01 --memory-budget 1G
model=(--model sage --layers 2 --hidden 128 --fanouts 10,5 --batch-size 1000 --epochs "$epochs"
       --lr 0.003 --eval-fanouts 10,5 --seed 1)

run() {
  local name=$1; shift
  "$strata" train "$@" "${model[@]}" --metrics-out "$out/$name.jsonl" > /dev/null
  python3 - "$name" "$out/$name.jsonl" <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
records = [json.loads(line) for line in open(path)]
epochs = [r for r in records if r["event"] == "epoch"]
final = records[-1]
print(json.dumps({
    "run": name,
    "epoch_time_s": [round(r["time_s"], 2) for r in epochs],
    "train_loss": [round(r["train_loss"], 4) for r in epochs],
    "val_acc": final["val_acc"], "test_acc": final["test_acc"],
    "load_rate_mb_s": [round(r.get("load_rate_bytes_per_s", 0) / 1e6) for r in epochs],
    "stall_s": [round(r.get("stall_s", 0), 2) for r in epochs],
    "reuse_mean": [round(r.get("reuse_mean", 0), 2) for r in epochs],
    "disk_mb": [round(r["disk_bytes"] / 1e6) for r in epochs],
    "halo_nodes": [r.get("halo_nodes", 0) for r in epochs],
    "history_mb": [round((r.get("historical_bytes_read", 0) +
                          r.get("historical_bytes_written", 0)) / 1e6) for r in epochs],
    "peak_rss_mb": round(final["peak_rss_bytes"] / 2**20),
}))
PY
}

run memory "$dataset" --feature-store memory --memory-budget 8G
run direct "$dataset" --feature-store direct --memory-budget 1G
run multistage "$partitioned" --multistage partition --memory-budget 1G
run pbs "$partitioned" --multistage pbs --memory-budget 1G
run multistage-reuse2 "$partitioned" --multistage partition --reuse 2 --memory-budget 1G
run multistage-reuse-auto "$partitioned" --multistage partition --reuse auto --memory-budget 1G
run multistage-lbs "$dataset" --multistage lbs --memory-budget 1G
