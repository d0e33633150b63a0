#!/usr/bin/env bash
# The larger-than-memory path end to end, every command within one memory budget:
# generate a papers100M-like graph (--like papers100M: NODES nodes, 172 classes, 128-dim
# features, train/val/test 1.1% / 0.11% / 0.2%) with a third of its edges (average degree 10)
# and float16 features, partition it (GAP, 1024 parts, 1% hubs), remove the unpartitioned
# copy, train the Hanoi thesis's model (GraphSAGE, 3 layers, hidden 256, fanouts 15,10,5,
# batch 1000) with --multistage partition until validation accuracy stops improving
# (--patience 2) or the first epoch that ends TIME_LIMIT seconds (default 3600) into the run,
# scoring every val node after each epoch and every test node at the end with layer-wise
# inference (full neighbourhoods), then time BATCHES batches with the direct store on the same
# data (BATCHES=0 skips it). Prints two markdown tables: per stage the wall time, peak RSS
# against the budget, bytes read and written (the kernel's block I/O counts) against the
# disk's ceilings measured first, the data directory's size after the stage, and the figures;
# then the learning curve. Progress lines go to DATA/scale-NODES.log, each stage's figures to
# DATA/scale-NODES.stats/.
#   bench/scale.sh [NODES] [DATA] [BUDGET] [BATCHES] [STRATA]
# At the default 100M nodes this needs about 66 GB of disk and 40 minutes to an hour and a half
# on 2 cores; a small NODES (e.g. 1000000) checks the script in a minute.
set -euo pipefail
nodes=${1:-100000000}
data=${2:-data}
budget=${3:-8G}
batches=${4:-100}
strata=${5:-build/strata}
src=$data/scale-$nodes
part=$src-p1024
log=$data/scale-$nodes.log
stats=$data/scale-$nodes.stats  # the stages' figures, kept for the table
mkdir -p "$data"
rm -rf "$stats"
mkdir -p "$stats"
: > "$log"

# run NAME COMMAND...: runs it under GNU time, appending its progress to the log.
run() {
  local name=$1; shift
  echo "== $name: $*" >> "$log"
  /usr/bin/time -f '{"wall_s": %e, "peak_rss_kb": %M, "read_blocks": %I, "written_blocks": %O}' \
    -o "$stats/$name.time" "$@" > "$stats/$name.out" 2>> "$log"
  cat "$stats/$name.out" >> "$log"
  du -sb "$data"/scale-"$nodes"* 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}' \
    > "$stats/$name.disk"
}

run generate "$strata" generate "$src" --like papers100M --nodes "$nodes" --avg-degree 10 \
  --feature-dtype float16 --seed 1 --memory-budget "$budget"
run partition "$strata" partition "$src" "$part" --parts 1024 --hubs 0.01 \
  --memory-budget "$budget"
"$strata" bench disk "$src" --seconds 3 --depths 128 --json > "$stats/disk.json" 2>> "$log"
rm -rf "$src"
model=(--model sage --layers 3 --hidden 256 --fanouts 15,10,5 --batch-size 1000 --lr 0.003
       --seed 1 --memory-budget "$budget")
run multistage "$strata" train "$part" "${model[@]}" --multistage partition --epochs 100 \
  --patience 2 --time-limit "${TIME_LIMIT:-3600}" --eval layerwise --scratch-dir "$data" \
  --scratch-float16 --checkpoint "$part-checkpoint" --metrics-out "$stats/multistage.jsonl"
if [ "$batches" -gt 0 ]; then
  run direct "$strata" train "$part" "${model[@]}" --epochs 1 --feature-store direct \
    --max-batches "$batches" --eval none --metrics-out "$stats/direct.jsonl"
fi

python3 - "$stats" "$budget" "$nodes" "$log" <<'PY'
import json, os, sys
stats, budget, nodes, log = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
units = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
budget_bytes = int(float(budget[:-1]) * units[budget[-1]]) if budget[-1] in units else int(budget)
disk = json.load(open(os.path.join(stats, "disk.json")))
random = disk["random_4k"][-1]
print(f"{nodes:,} nodes, budget {budget}; the disk: {random['iops'] / 1e3:.0f}K random 4 KiB "
      f"reads/s at depth {random['depth']}, sequential {disk['sequential_1m']['mb_per_s']:.0f} MB/s\n")
print("| stage | wall | peak RSS (of budget) | read | written | data on disk | figures |")
print("|---|---|---|---|---|---|---|")
curve = []
for name in ["generate", "partition", "multistage", "direct"]:
    if not os.path.exists(os.path.join(stats, f"{name}.time")):
        continue
    t = json.load(open(os.path.join(stats, f"{name}.time")))
    size = int(open(os.path.join(stats, f"{name}.disk")).read())
    result = ""
    metrics = os.path.join(stats, f"{name}.jsonl")
    if os.path.exists(metrics):
        records = [json.loads(line) for line in open(metrics)]
        epochs = [r for r in records if r["event"] == "epoch"]
        epoch, final = epochs[0], records[-1]
        result = (f"epoch {epoch['time_s']:.1f} s, {epoch['batches']} batches "
                  f"({epoch['time_s'] / epoch['batches'] * 1000:.0f} ms each), train busy "
                  f"{epoch['stage_busy']['train_s']:.1f} s, read {epoch['disk_bytes'] / 1e9:.1f} GB")
        if final.get("test_acc") is not None:
            curve = epochs
            result += (f"; {len(epochs)} epochs (stopped by {final['stopped_by']}), test "
                       f"{final['final_test_acc']:.4f} at the last epoch, "
                       f"{final['best_test_acc']:.4f} at the best (epoch {final['best_epoch']})")
    rss = t["peak_rss_kb"] * 1024
    print(f"| {name} | {t['wall_s']:.1f} s | {rss / 2**30:.2f} GiB ({rss / budget_bytes:.0%}) "
          f"| {t['read_blocks'] * 512 / 1e9:.1f} GB | {t['written_blocks'] * 512 / 1e9:.1f} GB "
          f"| {size / 1e9:.1f} GB | {result} |")
if curve:
    print("\nThe learning curve (multistage; val scored layer-wise after each epoch):\n")
    print("| epoch | training s | run's clock at its end, s | train loss | val acc | read GB |")
    print("|---|---|---|---|---|---|")
    for r in curve:
        print(f"| {r['epoch']} | {r['time_s']:.1f} | {r['elapsed_s']:.1f} | {r['train_loss']:.4f} "
              f"| {r['val_acc']:.4f} | {r['disk_bytes'] / 1e9:.1f} |")
PY
