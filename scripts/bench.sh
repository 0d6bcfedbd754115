#!/usr/bin/env bash
# bench.sh - every relish benchmark in one go (`make bench` calls it after
# building BUILD_DIR); each prints its own figures, see docs/benchmarks.md.
#   bench_tpe          the TPE sampler's cost per suggestion (when built)
#   bench_regret       search quality: regret on Branin and Hartmann6 (2 minutes)
#   bench_exec         the process executor's cost per segment vs posix_spawn
#   bench-digits.sh    relish vs Optuna 3.1 on digits, MLP variant only
#                      (VARIANTS="mlp cnn" for both)
#   bench_10k.sh       relish's peak memory and per-trial overhead over N
#                      ctrial trials (N=2000 here; N=10000 is the goal's run)
#   bench-sim.sh       the simulator's policy sweep and bench_sim (when present)
#   bench_serve        relish serve under 50 experiments from 5 users (root)
# Usage: scripts/bench.sh [BUILD_DIR]   (default build/release)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build/release}
[ -x "$BUILD/relish" ] || { echo "bench: build $BUILD first (make build)" >&2; exit 2; }
section() { printf '\n==== %s ====\n' "$1"; }
echo "bench: $(nproc) CPUs, $(uname -m), load $(cut -d' ' -f1-3 /proc/loadavg)" \
	"(timings on a busy machine are noisy)"

if [ -x "$BUILD/bench_tpe" ]; then
	section bench_tpe
	"$BUILD/bench_tpe"
fi
if [ -x "$BUILD/bench_regret" ]; then
	section "bench_regret (relish only; scripts/bench-regret.sh adds Optuna 5)"
	"$BUILD/bench_regret" --seeds 200
fi
section bench_exec
"$BUILD/bench_exec" 20
section "bench-digits (VARIANTS=${VARIANTS:-mlp})"
VARIANTS=${VARIANTS:-mlp} SKIP_BUILD=1 scripts/bench-digits.sh "$BUILD"
section "bench_10k (N=${N:-2000})"
N=${N:-2000} bench/bench_10k.sh "$BUILD"
if [ "$(id -u)" = 0 ] && [ -x "$BUILD/bench_serve" ]; then
	section "bench_serve (relish serve: 50 experiments from 5 users)"
	"$BUILD/bench_serve"
fi
if [ -x scripts/bench-sim.sh ]; then
	section bench-sim
	scripts/bench-sim.sh "$BUILD"
fi
