#!/bin/sh
# gpu_family_trial.sh BATCH STATE_FILE [SM] - a stand-in GPU trial whose
# memory follows a known law of its parameters: 300 + 4 * BATCH MiB, busy
# SM percent (default 25).  For tests/test_run_gpu_family.sh and
# test_run_gpu_policies.sh (no GPU needed): while it runs it appends
# "DEV PID MIB SM" to STATE_FILE, which the scripted NVML stand-in
# (tests/support/libnvidia-ml-standin.c, `state FILE`) reports as this
# process's memory and utilisation.  Given less than it needs
# (RELISH_GPU_MEMORY_MIB) it fails as PyTorch does: the CUDA out-of-memory
# message and exit 1.  Trial contract: oneshot, one metric line per epoch.
batch=$1
state=$2
sm=${3:-25}
need=$((300 + 4 * batch))
if [ "${RELISH_GPU_MEMORY_MIB:-0}" -lt "$need" ]; then
	echo "RuntimeError: CUDA out of memory. Tried to allocate $need MiB (reserved $RELISH_GPU_MEMORY_MIB MiB)" >&2
	exit 1
fi
dev=${CUDA_VISIBLE_DEVICES##*-}   # GPU-fake-N -> N, the NVML index
echo "$dev $$ $need $sm" >>"$state"
e=${RELISH_RESOURCE_FROM%.*}
to=${RELISH_RESOURCE_TO%.*}
while [ "$e" -lt "$to" ]; do
	e=$((e + 1))
	sleep 0.4
	echo "RELISH epoch=$e accuracy=0.$((batch % 89 + e))"
done
