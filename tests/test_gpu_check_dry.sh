#!/usr/bin/env bash
# test_gpu_check_dry.sh - scripts/gpu-check.sh in its dry-run mode
# (GPU_CHECK_DRY_RUN=1: two stand-in GPUs, scripts/gpu_trial.py holding
# memory through the NVML stand-in), so the GPU check's script path, spec,
# CLI flags and export keys are exercised on every CI run.  Asserts the
# summary table: every policy finished 6/6 trials, exclusive never put two
# segments on one GPU, pack and relish did, and the profiles table printed.
set -euo pipefail
: "${RELISH:?path of the relish binary}" "${RELISH_BUILD:?build directory}" "${RELISH_SRC:?source dir}"
out=$(mktemp /tmp/relish-test-gpu-check-XXXXXX)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$out" >&2; exit 1; }
rc=0
GPU_CHECK_DRY_RUN=1 GPU_CHECK_STANDIN="$RELISH_BUILD/libnvidia-ml-standin.so" \
  bash "$RELISH_SRC/scripts/gpu-check.sh" >"$out" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "gpu-check.sh dry run exited $rc"
row() { awk -v p="$1" '$1 == p && $2 == "off"' "$out"; }
for p in exclusive pack relish; do
  [ "$(row $p | awk '{print $3}')" = 6/6 ] || fail "$p: trials done"
done
[ "$(row exclusive | awk '{print $8}')" = 1 ] || fail "exclusive shared a GPU"
[ "$(row pack | awk '{print $8}')" -ge 2 ] || fail "pack never shared a GPU"
[ "$(row relish | awk '{print $8}')" -ge 2 ] || fail "relish never shared a GPU"
grep -q '^SHAPE .*EST_BASIS' "$out" || fail "no profiles table"
echo "test_gpu_check_dry: ok"
