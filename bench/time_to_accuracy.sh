#!/usr/bin/env bash
# Time to accuracy: every training path on one dataset with one recipe (default SAGE-3 with the
# thesis's settings: hidden 256, seeds-first fanouts 15,10,5, batch 1000, lr 1e-3, dropout 0.5),
# each trained until validation accuracy stops improving (--patience) or a wall-clock cap, val
# and test scored layer by layer (`--eval layerwise`: full neighbourhoods, exact, and on every
# path the same cost). Prints a Markdown table: epochs, stop reason, best val and the final
# model's test accuracy, epochs and seconds to 99% of the reference's validation accuracy (the
# memory store's best, mean over its seeds) in training time and in wall time (start-up and
# evaluations included), bytes read, peak RSS; and draws validation accuracy against wall time
# for every run (strata.report --against-time).
#
#   bench/time_to_accuracy.sh DATASET PARTITIONED OUT_DIR
#
# DATASET: a generated or imported dataset; PARTITIONED: it partitioned (`strata partition`,
# for the partition and pbs paths). Environment (defaults in brackets):
#   PATHS      runs, any of: memory direct-ns direct-labor partition partition-auto pbs lbs [all]
#   BUDGET     --memory-budget of the out-of-core paths [6G]
#   REF_BUDGET --memory-budget of the memory store [8G]
#   CACHE      the direct store's cache as a share of the feature bytes, or auto (what the
#              budget leaves) [0.25]
#   MACRO      partitions per macro-batch (partition, pbs) [the most that fit BUDGET]
#   LBS_MACRO  mini-batches per macro-batch (lbs) [the most that fit BUDGET]
#   PATIENCE   epochs without a better validation accuracy that end a run [2]
#   CAP_S      seconds after which a run ends with its current epoch [1800]
#   EPOCHS     the most epochs a run trains [100]
#   REF_SEEDS  seeds of the reference [1 2 3]; SEEDS: of the other paths [1]
#   RECIPE     the model and sampling options [the SAGE-3 recipe above]
#   STRATA     the binary [build/strata]
# OUT_DIR keeps each run's metrics (NAME-sSEED.jsonl) and output; rerunning skips the runs whose
# metrics are complete.
set -euo pipefail
if [[ $# -ne 3 ]]; then
  echo "usage: bench/time_to_accuracy.sh DATASET PARTITIONED OUT_DIR" >&2
  exit 2
fi
dataset=$1
partitioned=$2
out=$3
strata=${STRATA:-build/strata}
paths=${PATHS:-memory direct-ns direct-labor partition partition-auto pbs lbs}
budget=${BUDGET:-6G}
ref_budget=${REF_BUDGET:-8G}
cache=${CACHE:-0.25}
patience=${PATIENCE:-2}
cap_s=${CAP_S:-1800}
epochs=${EPOCHS:-100}
read -r -a recipe <<< "${RECIPE:---model sage --layers 3 --hidden 256 --fanouts 5,10,15 \
--batch-size 1000 --lr 0.001 --dropout 0.5}"
macro=()
if [[ -n "${MACRO:-}" ]]; then macro=(--macro-batch "$MACRO"); fi
lbs_macro=()
if [[ -n "${LBS_MACRO:-}" ]]; then lbs_macro=(--macro-batch "$LBS_MACRO"); fi
cache_option="--cache-fraction $cache"
if [[ $cache == auto ]]; then cache_option=""; fi
mkdir -p "$out"

# The options of path $1: its dataset, store or multistage method, and budget.
path_options() {
  case $1 in
    memory) echo "$dataset --feature-store memory --memory-budget $ref_budget" ;;
    direct-ns) echo "$dataset --feature-store direct $cache_option --memory-budget $budget" ;;
    direct-labor) echo "$dataset --feature-store direct $cache_option --sampler labor \
--memory-budget $budget" ;;
    partition) echo "$partitioned --multistage partition --reuse 1 ${macro[*]} --memory-budget $budget" ;;
    partition-auto) echo "$partitioned --multistage partition --reuse auto ${macro[*]} \
--memory-budget $budget" ;;
    pbs) echo "$partitioned --multistage pbs ${macro[*]} --memory-budget $budget" ;;
    lbs) echo "$dataset --multistage lbs ${lbs_macro[*]} --memory-budget $budget" ;;
    *) echo "bench/time_to_accuracy.sh: unknown path $1" >&2; exit 2 ;;
  esac
}

# Trains path $1 with seed $2 to a plateau or the cap.
run() {
  local name=$1 seed=$2
  local metrics=$out/$name-s$seed.jsonl
  if grep -q '"event":"final"' "$metrics" 2> /dev/null; then return; fi
  read -r -a options <<< "$(path_options "$name")"
  echo "== $name, seed $seed: strata train ${options[*]} ${recipe[*]}" >&2
  # A path that cannot run (a budget too small for it) is reported and the others go on.
  if ! "$strata" train "${options[@]}" "${recipe[@]}" --eval layerwise --seed "$seed" \
    --epochs "$epochs" --patience "$patience" --time-limit "$cap_s" --metrics-out "$metrics" \
    > "$out/$name-s$seed.out" 2>&1; then
    echo "$name, seed $seed failed: $(tail -1 "$out/$name-s$seed.out")" >&2
  fi
}

for seed in ${REF_SEEDS:-1 2 3}; do run memory "$seed"; done
for name in $paths; do
  [[ $name == memory ]] && continue
  for seed in ${SEEDS:-1}; do run "$name" "$seed"; done
done

report=$(dirname "$0")/../python/strata/report.py
/usr/bin/python3 - "$out" "$report" $paths <<'EOF'
import glob, json, os, statistics, subprocess, sys

out, report, names = sys.argv[1], sys.argv[2], sys.argv[3:]
if "memory" not in names:
    names = ["memory"] + names

def load(prefix):
    records = [json.loads(line) for line in open(prefix + ".jsonl")]
    epochs = [r for r in records if r.get("event") == "epoch"]
    final = next((r for r in records if r.get("event") == "final"), None)
    if final is None:
        return None
    return epochs, final, final["final_test_acc"], final["peak_rss_bytes"]

runs, failed = {}, []
for name in names:
    for path in sorted(glob.glob(os.path.join(out, f"{name}-s*.out"))):
        prefix = path[:-len(".out")]
        run = load(prefix) if os.path.exists(prefix + ".jsonl") else None
        if run is None:
            failed.append(prefix)
        else:
            runs.setdefault(name, []).append((prefix,) + run)
if "memory" not in runs:  # no reference: nothing to measure against
    for prefix in failed:
        print(f"{os.path.basename(prefix)} failed: {open(prefix + '.out').read().strip()[-200:]}")
    sys.exit("bench/time_to_accuracy.sh: no memory-store run finished, so there is no reference")
reference = statistics.mean(max(e["val_acc"] for e in epochs if e["val_acc"] is not None)
                            for _, epochs, _, _, _ in runs["memory"])
target = 0.99 * reference
ref_test = statistics.mean(test for _, _, _, test, _ in runs["memory"])

def reach(epochs):
    # (epochs, training seconds, wall seconds) until val first reached the target.
    training = 0.0
    for e in epochs:
        training += e["time_s"]
        if e["val_acc"] is not None and e["val_acc"] >= target:
            return e["epoch"] + 1, training, e["elapsed_s"]
    return None, None, None

print(f"reference: memory store, best val {reference:.4f} (mean of {len(runs['memory'])} seeds); "
      f"target 99%: {target:.4f}; layer-wise test {ref_test:.4f}\n")
print("| path | seed | epochs (stop) | epoch s | best val | test | gap, points | to target: "
      "epochs | training s | wall s | GB read, whole run | peak RSS GiB |")
print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for name in names:
    for prefix, epochs, final, test, rss in runs.get(name, []):
        seed = prefix.rsplit("-s", 1)[1]
        n, training, wall = reach(epochs)
        stop = final.get("stopped_by", "epochs")
        mean_epoch = statistics.mean(e["time_s"] for e in epochs)
        read = sum(e["disk_bytes"] for e in epochs) / 1e9
        print(f"| {name} | {seed} | {len(epochs)} ({stop}) | {mean_epoch:.1f} | "
              f"{final['best_val_acc']:.4f} | {test:.4f} | {100 * (test - ref_test):+.2f} | "
              + (f"{n} | {training:.1f} | {wall:.1f} | " if n else "not reached | | | ") +
              f"{read:.1f} | {rss / 2**30:.2f} |")

for prefix in failed:
    print(f"| {os.path.basename(prefix)} | failed: {open(prefix + '.out').read().strip()[-200:]} |")
prefixes = [p for name in names for p, *_ in runs.get(name, [])]
plot = os.path.join(out, "time_to_accuracy.png")
subprocess.run([sys.executable, report, *[p + ".jsonl" for p in prefixes], "-o", plot,
                "--labels", ",".join(os.path.basename(p) for p in prefixes), "--against-time",
                "--target", f"{target:.4f}", "--title", f"Time to accuracy: {out}"], check=True)
print(f"\nplot: {plot}")
EOF
