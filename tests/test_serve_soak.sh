#!/usr/bin/env bash
# test_serve_soak.sh - the short soak (issue 27, item 6): relish serve on a
# history of 1,000 finished experiments and 20,000 trials, then 9 waves of
# 40 experiments of the C trial, each wave ended before the next
# (bench/bench_history.c with small figures); the daemon's resident memory
# after each wave may not grow: the least-squares slope over the waves
# after 3 of warm-up (240 experiments) is at most 30 KiB per finished
# experiment (before issue 27 every ended experiment stayed in memory,
# about 85 KiB each in a release build, more with ASan; what is left here
# is bounded caches still filling: SQLite's page caches of a file that
# grows, the API's text cache).  An assertion on the slope, not on time.  The long
# soak is the benchmark itself (docs/benchmarks.md, "A long history").
set -euo pipefail
: "${RELISH:?path of the relish binary}" "${RELISH_BUILD:?build directory}"
if [ "$(id -u)" != 0 ]; then echo "SKIP: bench_history runs relish serve as root"; exit 77; fi
if [ ! -x "$RELISH_BUILD/bench_history" ]; then
  echo "SKIP: no bench_history in $RELISH_BUILD (configured with RELISH_BENCH=OFF)"; exit 77
fi
# AddressSanitizer keeps freed memory in a quarantine (256 MB by default)
# that would grow the resident size whatever relish frees: none for the
# daemon here, so its RSS follows what it holds.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
out=$(HIST_EXPS=1000 HIST_TRIALS=20000 WAVES=9 WARMUP=3 WAVE=40 READS=50 SLOPE_MAX=30 \
  "$RELISH_BUILD/bench_history" "$RELISH" "$RELISH_BUILD/ctrial" 2>&1) || {
  echo "FAIL: the daemon's memory grows with its history:" >&2
  echo "$out" >&2
  exit 1
}
echo "$out" | grep -q '^slope .*\[goal flat, <= 30 KiB: met\]' || { echo "FAIL: no slope line: $out" >&2; exit 1; }
echo "$out" | grep -E '^(RSS|slope) '
