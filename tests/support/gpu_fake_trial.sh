#!/bin/sh
# gpu_fake_trial.sh NEED_MIB STATE_FILE - a stand-in GPU trial for
# tests/test_run_gpu.sh (no GPU needed).  It follows the trial contract in
# oneshot mode and "uses" NEED_MIB of GPU memory on the device relish gave
# it: it appends "DEV PID MIB" to STATE_FILE, which the scripted NVML
# stand-in (tests/support/libnvidia-ml-standin.c, `state FILE`) reports as
# this process's memory.  When relish reserved less than it needs
# (RELISH_GPU_MEMORY_MIB < NEED_MIB) it fails the way PyTorch does: the
# CUDA out-of-memory message on stderr and exit 1.
need=$1
state=$2
echo "ENV CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES RELISH_GPU_MEMORY_MIB=$RELISH_GPU_MEMORY_MIB TF_FORCE_GPU_ALLOW_GROWTH=$TF_FORCE_GPU_ALLOW_GROWTH"
if [ "${RELISH_GPU_MEMORY_MIB:-0}" -lt "$need" ]; then
	echo "RuntimeError: CUDA out of memory. Tried to allocate $need MiB (reserved $RELISH_GPU_MEMORY_MIB MiB)" >&2
	exit 1
fi
dev=${CUDA_VISIBLE_DEVICES##*-}   # GPU-fake-N -> N, the NVML index
echo "$dev $$ $need" >>"$state"
e=${RELISH_RESOURCE_FROM%.*}
to=${RELISH_RESOURCE_TO%.*}
while [ "$e" -lt "$to" ]; do
	e=$((e + 1))
	sleep 0.5
	echo "RELISH epoch=$e accuracy=0.$((need % 97 + e))"
done
