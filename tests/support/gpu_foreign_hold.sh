#!/bin/sh
# gpu_foreign_hold.sh DEV MIB SECS STATE_FILE - a process relish does not
# own that holds MIB of stand-in GPU DEV for SECS seconds (another user's
# notebook, for tests/test_run_gpu_foreign.sh): it appends "DEV PID MIB" to
# STATE_FILE, which the NVML stand-in reports as its memory while it lives,
# then sleeps.  It is in no segment's process group, so relish counts its
# memory as others' use.
echo "$1 $$ $2" >>"$4"
exec sleep "$3"
