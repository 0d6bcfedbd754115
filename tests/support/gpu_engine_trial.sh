#!/bin/sh
# gpu_engine_trial.sh KIND NEED_MIB STATE_FILE [STEPS] - a stand-in GPU trial
# for which sharing a device has a true cost (issue 26; no GPU needed).
# Each device has one exclusive "engine", a lock file beside STATE_FILE
# ($STATE_FILE.engine.DEV) that a step holds for its kernel part, as a
# kernel holds the GPU's compute: co-located trials queue for it, so they
# run as fast as alone only while the engine has idle time left, and the
# engine pays 0.05 s to switch from one trial's kernel to another's (a
# context switch), so trials that keep it busy lose by sharing.
#   light  a step is 0.20 s on the host (data loading) and 0.05 s on the
#          engine: two or three share a device almost for free
#   heavy  0.02 s on the host, 0.23 s on the engine: two on one device
#          each run at under half speed (together about 0.9 of one alone:
#          they lose by sharing)
#   free   0.25 s on the host, none on the engine: sharing is free (as the
#          other stand-in trials), while NVML (`busy`) still says 100 %
# All take 0.25 s a step alone; an epoch is STEPS steps (default 4), one
# metric line each (trial contract, oneshot).  While it runs the trial
# appends "DEV PID MIB" to STATE_FILE, which the NVML stand-in
# (libnvidia-ml-standin.c, `state FILE`) reports as its memory, and, with
# the script's `busy` directive, as 100 % busy whatever its kind, as
# real time-based utilisation does.  Given less memory than NEED_MIB
# (RELISH_GPU_MEMORY_MIB) it fails as PyTorch does.
kind=$1
need=$2
state=$3
steps=${4:-4}
case "$kind" in
light) host=0.20 kernel=0.05 ;;
heavy) host=0.02 kernel=0.23 ;;
free) host=0.25 kernel= ;;
*) echo "gpu_engine_trial: KIND: expected light, heavy or free, got '$kind'" >&2; exit 2 ;;
esac
if [ "${RELISH_GPU_MEMORY_MIB:-0}" -lt "$need" ]; then
	echo "RuntimeError: CUDA out of memory. Tried to allocate $need MiB (reserved $RELISH_GPU_MEMORY_MIB MiB)" >&2
	exit 1
fi
dev=${CUDA_VISIBLE_DEVICES##*-}   # GPU-fake-N -> N, the NVML index
echo "$dev $$ $need" >>"$state"
engine=$state.engine.$dev
exec 9>>"$engine"
: >>"$engine.last"
e=${RELISH_RESOURCE_FROM%.*}
to=${RELISH_RESOURCE_TO%.*}
while [ "$e" -lt "$to" ]; do
	e=$((e + 1))
	i=0
	while [ "$i" -lt "$steps" ]; do
		i=$((i + 1))
		sleep "$host"
		[ -n "$kernel" ] || continue
		flock 9
		last=
		read -r last <"$engine.last"
		[ "$last" = "$$" ] || sleep 0.05
		echo "$$" >"$engine.last"
		sleep "$kernel"
		flock -u 9
	done
	echo "RELISH epoch=$e accuracy=0.$((need % 89 + e))"
done
