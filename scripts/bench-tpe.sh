#!/usr/bin/env bash
# Measure relish's TPE sampler (bench/bench_tpe.c, Release build) and, when
# python3-optuna is installed, Optuna's TPESampler the same way
# (bench/optuna_tpe.py), then print the ratio of the two at 1,000 trials.
# Usage: scripts/bench-tpe.sh [build-dir]   (default build/rel, configured
# as a Release build here if it does not exist yet)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/rel}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" --target bench_tpe -j 2 >/dev/null

relish_out=$("$build/bench_tpe")
echo "$relish_out"
ours=$(sed -n 's/^tpe_ms_per_trial_at_1000=//p' <<<"$relish_out")

if /usr/bin/python3 -c 'import optuna' 2>/dev/null; then
  optuna_out=$(/usr/bin/python3 bench/optuna_tpe.py 100 1000)
  echo "$optuna_out"
  theirs=$(sed -n 's/^optuna_tpe_ms_per_trial_at_1000=//p' <<<"$optuna_out")
  awk -v a="$ours" -v b="$theirs" \
    'BEGIN { printf "tpe_speedup_vs_optuna_at_1000=%.0f\n", b / a }'
else
  echo "optuna: python3-optuna not installed, live comparison skipped" >&2
fi
