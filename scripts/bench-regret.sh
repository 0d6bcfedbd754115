#!/usr/bin/env bash
# bench-regret.sh - search quality, relish beside Optuna 5, in one command
# (docs/benchmarks.md, "Search quality"):
#   1. bench/optuna_regret.py: Optuna 5's TPESampler (its defaults:
#      multivariate, constant liar) and GPSampler on Branin and Hartmann6,
#      100 trials, sequential and 4 at a time, OPTUNA_SEEDS and
#      OPTUNA_GP_SEEDS seeds; only when OPTUNA5 names a folder holding
#      Optuna 5's source (docs/benchmarks.md says how to get it: it is not
#      in Debian, and nothing is fetched here);
#   2. build/.../bench_regret: relish's samplers the same way through the
#      engine, SEEDS seeds (GP_SEEDS for gp), with Optuna's runs in the
#      table and the goals;
#   3. end to end: `relish run` on a trial that prints Branin's value
#      (bench/branin_trial.awk), TPE one at a time, E2E_SEEDS seeds; each
#      run's best value must equal what bench_regret's engine-driven run of
#      the same seed found (one trial at a time is deterministic).
# Usage: [OPTUNA5=DIR] scripts/bench-regret.sh [BUILD_DIR]   (default build/release)
#   SEEDS=200 GP_SEEDS=50 OPTUNA_SEEDS=100 OPTUNA_GP_SEEDS=30 E2E_SEEDS=3 JOBS=$(nproc)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
seeds=${SEEDS:-200}
gp_seeds=${GP_SEEDS:-50}
optuna_seeds=${OPTUNA_SEEDS:-100}
optuna_gp_seeds=${OPTUNA_GP_SEEDS:-30}
e2e_seeds=${E2E_SEEDS:-3}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
if [ -z "${SKIP_BUILD:-}" ]; then
  cmake --build "$build" --target bench_regret relish -j "${JOBS:-2}" >/dev/null
fi
work=$(mktemp -d /tmp/relish-bench-regret-XXXXXX)
trap 'rm -rf "$work"' EXIT

echo "bench-regret: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "${OPTUNA5:-}" ]; then
  t0=$(date +%s)
  run_optuna() {  # VARIANT SEEDS
    OMP_NUM_THREADS=1 PYTHONPATH="$OPTUNA5" /usr/bin/python3 bench/optuna_regret.py \
      --variants "$1" --seeds "$2" --jobs "${JOBS:-$(nproc)}" \
      >>"$work/optuna.txt" 2>"$work/optuna.err" || { cat "$work/optuna.err" >&2; exit 1; }
  }
  run_optuna tpe "$optuna_seeds"
  run_optuna gp "$optuna_gp_seeds"
  echo "optuna: $(grep -c '^optuna ' "$work/optuna.txt") runs in $(( $(date +%s) - t0 )) s ($(cat "$work/optuna.err"))"
  "$build/bench_regret" --seeds "$seeds" --gp-seeds "$gp_seeds" --optuna "$work/optuna.txt"
else
  echo "optuna: OPTUNA5 not set (docs/benchmarks.md: Optuna 5 from its source), relish only" >&2
  "$build/bench_regret" --seeds "$seeds" --gp-seeds "$gp_seeds"
fi

# End to end: the same setting through relish run, one trial at a time.
"$build/bench_regret" --seeds "$e2e_seeds" --runs branin tpe 1 >"$work/engine.txt"
fail=0
for ((s = 0; s < e2e_seeds; s++)); do
  cat >"$work/e2e-$s.yaml" <<S
name: branin-e2e-$s
objective: {metric: value, mode: min}
search:
  algorithm: tpe
  seed: $s
  max_trials: 100
  max_concurrent: 1
  space: {x0: {type: uniform, low: -5, high: 10}, x1: {type: uniform, low: 0, high: 15}}
trial:
  command: [/usr/bin/awk, -f, "$PWD/bench/branin_trial.awk", "--", "{x0}", "{x1}"]
  resources: {cpus: 0.1}
S
  t0=$(date +%s.%N)
  "$build/relish" run "$work/e2e-$s.yaml" --db "$work/e2e-$s.db" --runs-dir "$work/runs-$s" \
    --quiet >/dev/null 2>"$work/e2e-$s.err" || { tail -3 "$work/e2e-$s.err" >&2; exit 1; }
  t1=$(date +%s.%N)
  live=$("$build/relish" best --db "$work/e2e-$s.db" --json |
    /usr/bin/python3 -c 'import json, sys; print(repr(json.load(sys.stdin)["objective"]["value"]))')
  engine=$(awk -v s="$s" '$1 == s { print $2 }' "$work/engine.txt")
  verdict=$(/usr/bin/python3 -c "import sys; a, b = float('$live'), float('$engine'); print('same' if abs(a - b) <= 1e-12 * max(1, abs(b)) else 'DIFFERENT')")
  [ "$verdict" = same ] || fail=1
  printf 'end to end: branin tpe seed %d, relish run (100 trials, %.1f s): best %s; engine-driven: %s: %s\n' \
    "$s" "$(echo "$t1 - $t0" | bc)" "$live" "$engine" "$verdict"
done
[ "$fail" = 0 ] || { echo "end to end: relish run and the engine-driven benchmark disagree" >&2; exit 1; }
