#!/usr/bin/env bash
# gpu-check.sh - the GPU check (not run in CI): on a machine with an NVIDIA
# GPU and PyTorch, run the same small set of PyTorch CUDA trials
# (scripts/gpu_trial.py) under the exclusive, pack and relish policies, with
# and without MPS when an MPS daemon is running, and print makespan,
# throughput and peak memory per policy.  Finishes within 8 minutes: the
# whole script runs under `timeout`, and each run has its own cap.
#
#   scripts/gpu-check.sh            build (build/gpu-check) and run
#   RELISH=path scripts/gpu-check.sh   use an existing binary
#
# Exit codes: 0 all runs finished, 1 a run failed, 2 relish cannot run
# experiments yet, 77 no usable GPU (skip).
set -euo pipefail

TOTAL_CAP_S=470          # whole script, build included (8 minutes = 480 s)
RUN_CAP_S=70             # one `relish run`
EPOCHS=3                 # per trial
if [ -z "${GPU_CHECK_UNDER_TIMEOUT:-}" ]; then
  export GPU_CHECK_UNDER_TIMEOUT=1
  exec timeout --kill-after=10 "$TOTAL_CAP_S" bash "$0" "$@"
fi
start_s=$SECONDS

root=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
work=$(mktemp -d /tmp/relish-gpu-check-XXXXXX)
sampler_pid=
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
  if [ -n "$sampler_pid" ]; then kill "$sampler_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM      # so that the EXIT trap runs when the cap is hit
say() { printf 'gpu-check: %s\n' "$*" >&2; }

# ---- 1. Is there a GPU and a CUDA PyTorch? ----
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  say "no NVIDIA GPU (nvidia-smi -L failed): skipping"; exit 77
fi
if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  say "PyTorch with CUDA is not importable by $PY: skipping"; exit 77
fi
nvidia-smi -L >&2

# ---- 2. Build relish (release) unless one is given ----
if [ -z "${RELISH:-}" ]; then
  cmake -S "$root" -B "$root/build/gpu-check" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$root/build/gpu-check" -j "$(nproc)" --target relish >/dev/null
  RELISH="$root/build/gpu-check/relish"
fi
"$RELISH" devices >&2
if ! "$RELISH" run --help >/dev/null 2>&1; then
  say "this relish has no 'run' command yet: nothing to compare"; exit 2
fi

# ---- 3. The experiment: one spec, every policy ----
# Six trials: three model widths x two memory ballasts (1 and 6 GiB), so
# that several fit on one device side by side but not all of them.
write_spec() {
  cat >"$1" <<YAML
name: gpu-check
objective: {metric: accuracy, mode: max}
search:
  algorithm: grid
  max_trials: 6
  space:
    width: [256, 1024, 2048]
    ballast_mib: [1024, 6144]
    batch_size: 256
    steps_per_epoch: 150
schedule: {algorithm: none, resource: epoch, max: $EPOCHS, segment: 1}
trial:
  command: ["$PY", "$root/scripts/gpu_trial.py"]
  workdir: $root
  env: {OMP_NUM_THREADS: "1"}
  resources: {gpus: 1, gpu_memory: 8GiB, cpus: 1}
  timeout: 60s
sharing: {policy: relish}
YAML
}
spec="$work/gpu-check.yaml"
write_spec "$spec"

# Device memory in use, sampled twice a second while a run lasts.
start_sampler() {
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 500 >"$1" 2>/dev/null &
  sampler_pid=$!
}
stop_sampler() {
  kill "$sampler_pid" 2>/dev/null || true
  wait "$sampler_pid" 2>/dev/null || true
  sampler_pid=
}

# Summarise one run from `relish export --format json`: trials completed and
# the highest per-segment peak the store recorded.  The keys are looked up
# by name anywhere in the document, so a change of nesting does not break it.
summarise() {  # export.json samples.txt makespan_s
  "$PY" - "$@" "$EPOCHS" <<'PY'
import json, sys
exp, samples, makespan, epochs = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
PEAK_KEYS = ("peak_mem_mib", "peak_gpu_mem_mib", "peak_memory_mib")
trials, done, seg_peak = 0, 0, 0
def walk(x, in_trials=False):
    global trials, done, seg_peak
    if isinstance(x, dict):
        for k in PEAK_KEYS:
            if isinstance(x.get(k), (int, float)):
                seg_peak = max(seg_peak, x[k])
        for k, v in x.items():
            walk(v, in_trials or k == "trials")
    elif isinstance(x, list):
        for v in x:
            if in_trials and isinstance(v, dict) and "status" in v:
                trials += 1
                done += v["status"] in ("completed", "done", "finished")
            walk(v, in_trials)
try:
    walk(json.load(open(exp)))
except (OSError, ValueError):
    pass
dev_peak = 0
for line in open(samples):
    for cell in line.split(","):
        if cell.strip().isdigit():
            dev_peak = max(dev_peak, int(cell))
rate = done * epochs / makespan if makespan > 0 else 0.0
print(f"{done}/{trials or '?'}\t{makespan:.1f}\t{rate:.3f}\t{dev_peak}\t{seg_peak or '-'}")
PY
}

# ---- 4. MPS modes: "off" always; "on" when a daemon is listening ----
mps_dir="${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}"
modes=(off)
if [ -p "$mps_dir/control" ] || [ -S "$mps_dir/control" ]; then
  modes+=(on)
  say "MPS daemon found in $mps_dir"
else
  say "no MPS daemon (docs/gpu.md says how an administrator starts one)"
fi
mkdir -p "$work/no-mps"   # clients pointed here find no daemon: plain time-slicing

results="$work/results.tsv"
printf 'policy\tmps\ttrials_done\tmakespan_s\tepochs_per_s\tpeak_device_mib\tpeak_segment_mib\n' >"$results"
status=0
for mode in "${modes[@]}"; do
  for policy in exclusive pack relish; do
    left=$((TOTAL_CAP_S - (SECONDS - start_s) - 15))
    if [ "$left" -lt 20 ]; then
      say "time is short: skipping $policy/mps=$mode"; status=1; continue
    fi
    cap=$((left < RUN_CAP_S ? left : RUN_CAP_S))
    db="$work/$policy-$mode.db"
    if [ "$mode" = on ]; then pipe="$mps_dir"; else pipe="$work/no-mps"; fi
    say "running $policy (MPS $mode, at most ${cap}s)"
    start_sampler "$work/$policy-$mode.mem"
    t0=$(date +%s.%N)
    rc=0
    CUDA_MPS_PIPE_DIRECTORY="$pipe" timeout --kill-after=5 "$cap" \
      "$RELISH" run "$spec" --policy "$policy" --db "$db" >"$work/$policy-$mode.log" 2>&1 || rc=$?
    t1=$(date +%s.%N)
    stop_sampler
    if [ "$rc" -ne 0 ]; then
      say "$policy (MPS $mode) exited $rc; last lines:"; tail -n 5 "$work/$policy-$mode.log" >&2
      status=1
    fi
    "$RELISH" export --db "$db" --format json >"$work/$policy-$mode.json" 2>/dev/null || true
    makespan=$("$PY" -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t0" "$t1")
    printf '%s\t%s\t%s\n' "$policy" "$mode" \
      "$(summarise "$work/$policy-$mode.json" "$work/$policy-$mode.mem" "$makespan")" >>"$results"
  done
done

echo
column -t -s "$(printf '\t')" "$results" 2>/dev/null || cat "$results"
say "done in $((SECONDS - start_s)) s"
exit "$status"
