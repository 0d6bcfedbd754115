#!/bin/sh
# sim_live_trial.sh JOB STATE_FILE - a stand-in GPU trial for
# tests/test_sim_live.sh (no GPU needed).  JOB is "NEED:SECS:SM": it "uses"
# NEED MiB of GPU memory at SM percent utilisation for SECS seconds, so the
# test can write the same job as one row of a simulator trace
# (gpu_mem_mib, duration_s, gpu_util_pct).  While it runs it appends
# "DEV PID MIB SM" to STATE_FILE, which the scripted NVML stand-in
# (tests/support/libnvidia-ml-standin.c, `state FILE`) reports as this
# process's memory and utilisation.  Given less than it needs
# (RELISH_GPU_MEMORY_MIB) it fails as PyTorch does.  Trial contract:
# oneshot, one metric line at the end of its single segment.
IFS=: read -r need secs sm <<E
$1
E
state=$2
if [ "${RELISH_GPU_MEMORY_MIB:-0}" -lt "$need" ]; then
	echo "RuntimeError: CUDA out of memory. Tried to allocate $need MiB (reserved $RELISH_GPU_MEMORY_MIB MiB)" >&2
	exit 1
fi
dev=${CUDA_VISIBLE_DEVICES##*-}   # GPU-fake-N -> N, the NVML index
echo "$dev $$ $need $sm" >>"$state"
sleep "$secs"
echo "RELISH epoch=${RELISH_RESOURCE_TO%.*} accuracy=0.$((need % 89))"
