#!/usr/bin/env bash
# gpu-check.sh - the GPU check (not run in CI): on a machine with an NVIDIA
# GPU and PyTorch, run the same small set of PyTorch CUDA trials
# (scripts/gpu_trial.py) under the exclusive, pack and relish policies, with
# and without MPS when an MPS daemon is running, and print per policy:
# trials done, makespan, throughput, peak device memory, the most segments
# that shared a GPU, how many ran alone to be measured, and the family
# model's mean estimate error; then `relish profiles` of the relish run.
# Finishes within 8 minutes: the whole script runs under `timeout`, and
# each run has its own cap.
#
#   scripts/gpu-check.sh               build (build/gpu-check) and run
#   RELISH=path scripts/gpu-check.sh   use an existing binary
#   GPU_CHECK_DRY_RUN=1 scripts/gpu-check.sh
#       the same path on a machine without a GPU: relish sees two 16 GiB
#       GPUs through the scripted NVML stand-in (built with the tests:
#       libnvidia-ml-standin.so next to $RELISH, or GPU_CHECK_STANDIN=path),
#       and scripts/gpu_trial.py "holds" memory through the stand-in instead
#       of running PyTorch.  Checks the script, the spec and the CLI it
#       drives; its figures say nothing about a GPU.
#
# Exit codes: 0 all runs finished, 1 a run failed, 2 the spec does not
# validate, 77 no usable GPU (skip).
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

dry=${GPU_CHECK_DRY_RUN:-}
# ---- 1. Is there a GPU and a CUDA PyTorch? (dry run: the stand-in) ----
if [ -n "$dry" ]; then
  say "dry run: stand-in GPUs, no PyTorch"
else
  if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
    say "no NVIDIA GPU (nvidia-smi -L failed): skipping"; exit 77
  fi
  if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    say "PyTorch with CUDA is not importable by $PY: skipping"; exit 77
  fi
  nvidia-smi -L >&2
fi

# ---- 2. Build relish (release) unless one is given ----
if [ -z "${RELISH:-}" ]; then
  cmake -S "$root" -B "$root/build/gpu-check" -DCMAKE_BUILD_TYPE=Release >/dev/null
  targets=(relish)
  if [ -n "$dry" ]; then targets+=(nvidia-ml-standin); fi
  for t in "${targets[@]}"; do
    cmake --build "$root/build/gpu-check" -j "$(nproc)" --target "$t" >/dev/null
  done
  RELISH="$root/build/gpu-check/relish"
fi
if [ -n "$dry" ]; then
  export RELISH_NVML_LIBRARY="${GPU_CHECK_STANDIN:-$(dirname "$RELISH")/libnvidia-ml-standin.so}"
  export RELISH_NVML_SCRIPT="$work/nvml" GPU_CHECK_FAKE_STATE="$work/gpu-state"
  [ -f "$RELISH_NVML_LIBRARY" ] || { say "no stand-in library at $RELISH_NVML_LIBRARY"; exit 2; }
  : >"$GPU_CHECK_FAKE_STATE"
  printf '%s\n' "driver 0.0-dry-run" "device GPU-dry-0 16384 Stand-in 16GB" \
    "device GPU-dry-1 16384 Stand-in 16GB" "state $GPU_CHECK_FAKE_STATE" >"$RELISH_NVML_SCRIPT"
fi
unset RELISH_DEVICES
"$RELISH" devices >&2

# ---- 3. The experiment: one spec, every policy ----
# Six trials: three model widths x two memory ballasts (1 and 6 GiB), so
# that several fit on one device side by side but not all of them.  No
# memory hint: pack and relish reserve from measured profiles and the
# family model (first shapes run alone), which is what the check measures.
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
  resources: {gpus: 1, cpus: 1}
  shape_params: [width, ballast_mib, batch_size]
  timeout: 60s
sharing: {policy: relish}
YAML
}
spec="$work/gpu-check.yaml"
write_spec "$spec"
"$RELISH" validate "$spec" >&2 || { say "the check's spec does not validate"; exit 2; }

# Device memory in use, sampled twice a second while a run lasts (dry run:
# the stand-in's per-process figures from its state file, summed per GPU).
start_sampler() {
  if [ -n "$dry" ]; then
    (while :; do
       declare -A used=()
       while read -r dev pid mib _; do   # processes still alive only
         if [ -d "/proc/$pid" ]; then used[$dev]=$(( ${used[$dev]:-0} + mib )); fi
       done <"$GPU_CHECK_FAKE_STATE"
       line=""
       for d in "${!used[@]}"; do line+="${used[$d]},"; done
       echo "$line"; unset used; sleep 0.5
     done) >"$1" 2>/dev/null &
  else
    nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 500 >"$1" 2>/dev/null &
  fi
  sampler_pid=$!
}
stop_sampler() {
  kill "$sampler_pid" 2>/dev/null || true
  wait "$sampler_pid" 2>/dev/null || true
  sampler_pid=
}

# Summarise one run from `relish export --format json` (trials: a list of
# objects with "status"; segments: "device", "basis", "mem_reserved_mib",
# "est_mem_mib", "peak_mem_mib", "started_at", "ended_at") and the memory
# samples.  Columns: trials done, makespan, epochs/s, peak device MiB, peak
# segment MiB, most segments at once on one GPU, segments run alone
# (basis exclusive), mean |error| of family estimates in percent.
summarise() {  # trials.json segments.json samples.txt makespan_s
  "$PY" - "$@" "$EPOCHS" <<'PY'
import json, sys
tfile, sfile, samples, makespan, epochs = sys.argv[1:4] + [float(sys.argv[4]), int(sys.argv[5])]
def load(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return []
trials, segs = load(tfile), load(sfile)
done = sum(t.get("status") == "completed" for t in trials)
seg_peak = max([s["peak_mem_mib"] or 0 for s in segs] or [0])
most = 0
for s in segs:
    if s.get("started_at") is None:
        continue
    at = s["started_at"]
    most = max(most, sum(1 for o in segs if o["device"] == s["device"] and o["started_at"] is not None
                         and o["started_at"] <= at and (o["ended_at"] is None or at < o["ended_at"])))
alone = sum(s.get("basis") == "exclusive" for s in segs)
errs = [abs(s["est_mem_mib"] - s["peak_mem_mib"]) / s["peak_mem_mib"] for s in segs
        if s.get("basis") == "family" and s.get("est_mem_mib") and s.get("peak_mem_mib")]
err = "%.1f" % (100 * sum(errs) / len(errs)) if errs else "-"
dev_peak = 0
for line in open(samples):
    for cell in line.split(","):
        if cell.strip().isdigit():
            dev_peak = max(dev_peak, int(cell))
rate = done * epochs / makespan if makespan > 0 else 0.0
print(f"{done}/{len(trials) or '?'}\t{makespan:.1f}\t{rate:.3f}\t{dev_peak}\t{seg_peak or '-'}"
      f"\t{most}\t{alone}\t{err}")
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
printf 'policy\tmps\ttrials_done\tmakespan_s\tepochs_per_s\tpeak_device_mib\tpeak_segment_mib\tmax_per_gpu\talone\tfamily_err_pct\n' >"$results"
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
    if [ -n "$dry" ]; then : >"$GPU_CHECK_FAKE_STATE"; fi
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
    "$RELISH" export --db "$db" --format json >"$work/$policy-$mode.trials.json" 2>/dev/null || true
    "$RELISH" export --db "$db" --format json --what segments \
      >"$work/$policy-$mode.segments.json" 2>/dev/null || true
    makespan=$("$PY" -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t0" "$t1")
    printf '%s\t%s\t%s\n' "$policy" "$mode" \
      "$(summarise "$work/$policy-$mode.trials.json" "$work/$policy-$mode.segments.json" \
         "$work/$policy-$mode.mem" "$makespan")" >>"$results"
  done
done

echo
column -t -s "$(printf '\t')" "$results" 2>/dev/null || cat "$results"
if [ -f "$work/relish-off.db" ]; then
  echo
  echo "relish policy: measured shapes and the estimates made before measuring them"
  "$RELISH" profiles --db "$work/relish-off.db" || status=1
fi
say "done in $((SECONDS - start_s)) s"
exit "$status"
