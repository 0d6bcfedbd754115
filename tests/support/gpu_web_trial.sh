#!/bin/sh
# gpu_web_trial.sh BATCH STATE_FILE SLEEP_S [LR] - the stand-in GPU trial of
# tests/test_web.sh and test_metrics.sh: 300 + 4 * BATCH MiB at 30 % SM on
# the device relish gave it (appended to STATE_FILE as "DEV PID MIB SM",
# which the NVML stand-in reports as this process's), one accuracy line
# per epoch every SLEEP_S seconds, rising with the epoch towards a ceiling
# set by the batch and the learning rate (best near 3e-3).  Trial
# contract: oneshot.
batch=$1
state=$2
pause=${3:-0.3}
lr=${4:-0.003}
need=$((300 + 4 * batch))
dev=${CUDA_VISIBLE_DEVICES##*-}
echo "$dev $$ $need 30" >>"$state"
e=${RELISH_RESOURCE_FROM%.*}
to=${RELISH_RESOURCE_TO%.*}
while [ "$e" -lt "$to" ]; do
	e=$((e + 1))
	sleep "$pause"
	# ceiling by batch and lr, approached as 1 - 1/(e+1)
	awk -v b="$batch" -v e="$e" -v lr="$lr" 'BEGIN {
		l = log(lr) / log(10) + 2.5
		c = 0.7 + (b % 97) / 400 - 0.06 * l * l
		if (c < 0.2) c = 0.2
		printf "RELISH epoch=%d accuracy=%.4f loss=%.4f\n", e, c * (1 - 1 / (e + 1)), 1 - c * (1 - 1 / (e + 1)) }'
done
