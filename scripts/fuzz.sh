#!/usr/bin/env bash
# Runs every fuzz target of BUILD_DIR/fuzz for SECONDS each, one after another (`make fuzz`).
# Each target reads the checked-in seeds of fuzz/corpus/<target>/ and a scratch corpus,
# BUILD_DIR/fuzz-work/<target>/corpus; libFuzzer writes (and reduces) only in the first
# directory it is given, the scratch one, so the seeds stay as they are while what a run finds
# is kept for the next. Prints each target's executions and coverage (libFuzzer's final
# "#N DONE cov: X ft: Y" line); exits 1 if any target crashed, naming the crashing input.
set -euo pipefail

build=${1:?usage: scripts/fuzz.sh BUILD_DIR SECONDS}
seconds=${2:?usage: scripts/fuzz.sh BUILD_DIR SECONDS}
root=$(cd "$(dirname "$0")/.." && pwd)
# Stacks symbolized; a UBSan report stops the run with one.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

crashed=()
for seeds in "$root"/fuzz/corpus/*/; do
  target=$(basename "$seeds")
  work="$build/fuzz-work/$target"
  mkdir -p "$work/corpus" "$work/crashes"
  options=(-max_total_time="$seconds" -timeout=10 -print_final_stats=1
           -artifact_prefix="$work/crashes/")
  [ -f "$root/fuzz/$target.dict" ] && options+=(-dict="$root/fuzz/$target.dict")
  log="$work/fuzz.log"
  echo "fuzz: $target for ${seconds}s (log: $log)"
  if "$build/fuzz/$target" "${options[@]}" "$work/corpus" "$seeds" >"$log" 2>&1; then
    grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 | sed 's/^/  /' || true
  else
    crashed+=("$target")
    grep -E '^(==[0-9]+== ?ERROR|SUMMARY|terminate called|  what\(\)|.*runtime error|fuzz check failed)' \
      "$log" | head -n 5 | sed 's/^/  /' || true
    grep -E 'Test unit written to' "$log" | sed 's/^/  /' || true
  fi
done

if [ ${#crashed[@]} -gt 0 ]; then
  echo "fuzz: crashes in ${crashed[*]}; each input above reproduces with" \
       "$build/fuzz/<target> <input>" >&2
  exit 1
fi
echo "fuzz: no crashes"
