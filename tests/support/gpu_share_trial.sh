#!/bin/sh
# gpu_share_trial.sh NEED:SECS STATE_FILE TOTAL_MIB - a stand-in GPU trial
# for tests/test_run_gpu_foreign.sh that, unlike the other fake trials,
# also runs out of memory when the device itself is full, as a CUDA
# allocation does: under a lock on STATE_FILE it adds the memory of every
# live process listed there for its device (other trials, other relish
# runs, test helpers) and fails with the CUDA message when NEED more would
# not fit in TOTAL_MIB, or when relish reserved less than NEED
# (RELISH_GPU_MEMORY_MIB).  Otherwise it appends "DEV PID NEED" to
# STATE_FILE (the NVML stand-in reports it as this process's memory while
# it runs) and trains SECS seconds, one epoch a second.
IFS=: read -r need secs <<E2
$1
E2
state=$2
total=$3
dev=${CUDA_VISIBLE_DEVICES##*-}   # GPU-fake-N -> N, the NVML index
oom() {
	echo "RuntimeError: CUDA out of memory. Tried to allocate $need MiB ($1)" >&2
	exit 1
}
[ "${RELISH_GPU_MEMORY_MIB:-0}" -ge "$need" ] || oom "reserved $RELISH_GPU_MEMORY_MIB MiB"
exec 9>>"$state.lock"
flock 9
used=0
while read -r d p m rest; do
	[ "$d" = "$dev" ] && kill -0 "$p" 2>/dev/null && used=$((used + m))
done <"$state"
[ $((used + need)) -le "$total" ] || { flock -u 9; oom "$used MiB of $total MiB in use on the device"; }
echo "$dev $$ $need" >>"$state"
flock -u 9
exec 9>&-
e=${RELISH_RESOURCE_FROM%.*}
to=${RELISH_RESOURCE_TO%.*}
i=0
while [ "$i" -lt "$secs" ]; do
	i=$((i + 1))
	sleep 1
done
echo "RELISH epoch=$to accuracy=0.$((need % 89 + e))"
