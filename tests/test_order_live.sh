#!/usr/bin/env bash
# test_order_live.sh - `relish run` and `relish simulate` start segments in
# the same order under every queue order of the core (docs/scheduling.md,
# "Queue order"): the live driver passes no priorities, only each trial's
# job id and arrival, and the core orders the queue from the service it
# counts, as it does for the simulator.
#
# Workload: three one-trial experiments on one device (a host of 1 CPU,
# segments of 1 CPU, policy exclusive): W has three segments of one epoch,
# Y and Z one each; W is added first, then Y, then Z, all at once.  The
# trace gives the same three jobs at t=0 in that order, 1 s per segment.
# Worked example (start order of segments, trial and segment number):
#   fifo      W1 W2 W3 Y1 Z1   a started job keeps its arrival's turn
#   tiresias  W1 W2 W3 Y1 Z1   W never passes the first queue's 3600 GPU-s:
#                              FIFO within it
#   las       W1 Y1 Z1 W2 W3   at W1's end W has attained service, Y, Z none
#   fair      W1 Y1 Z1 W2 W3   one user (relish run's): las within it
set -euo pipefail
: "${RELISH:?path of the relish binary}" "${RELISH_BUILD:?build directory}"
PY=/usr/bin/python3
work=$(mktemp -d /tmp/relish-test-order-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset RELISH_DEVICES CUDA_MPS_PIPE_DIRECTORY

cat >"$work/devices.yaml" <<'D'
host:
  memory: 200MiB
  cpus: 1
D
spec() { # NAME EPOCHS
	cat <<S
name: $1
objective: {metric: accuracy, mode: max}
search:
  algorithm: random
  seed: 1
  max_trials: 1
  space:
    x: {type: uniform, low: 0.0, high: 1.0}
schedule: {algorithm: none, resource: epoch, max: $2, segment: 1}
trial:
  command: ["$RELISH_BUILD/ctrial", "--x", "{x}", "--sleep-ms", "300"]
  resources: {memory: 32MiB, cpus: 1}
S
}

cat >"$work/trace.csv" <<'T'
job_id,submit_time_s,duration_s,num_gpus,gpu_mem_mib
W,0,3,1,32
Y,0,1,1,32
Z,0,1,1,32
T

declare -A expect=([fifo]="W1 W2 W3 Y1 Z1" [tiresias]="W1 W2 W3 Y1 Z1"
		   [las]="W1 Y1 Z1 W2 W3" [fair]="W1 Y1 Z1 W2 W3")
for order in fifo tiresias las fair; do
	for e in W:3 Y:1 Z:1; do
		spec "${e%%:*}" "${e##*:}" >"$work/$order-${e%%:*}.yaml"
	done
	"$RELISH" run "$work/$order-W.yaml" "$work/$order-Y.yaml" "$work/$order-Z.yaml" \
	  --db "$work/$order.db" --devices "$work/devices.yaml" --policy exclusive --order "$order" \
	  --quiet >"$work/out" 2>"$work/err" \
	  || fail "$order: relish run exited $?: $(tail -5 "$work/err")"
	live=$("$PY" - "$work/$order.db" <<'P'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("""SELECT e.name, s.seq FROM segments s JOIN trials t ON t.id = s.trial_id
                     JOIN experiments e ON e.id = t.experiment_id
                     WHERE s.status = 'completed' ORDER BY s.started_at, s.id""").fetchall()
print(" ".join("%s%d" % (n, q + 1) for n, q in rows))
P
)
	"$RELISH" simulate --trace "$work/trace.csv" --gpus 1 --gpu-memory 200 --policy exclusive \
	  --order "$order" --segment-s 1 --restart-cost-s 0 --hints none --colocate none \
	  --out "$work/sim-$order" --placements >"$work/out" 2>"$work/err" \
	  || fail "$order: relish simulate exited $?: $(tail -5 "$work/err")"
	sim=$("$PY" - "$work/sim-$order/placements_exclusive.csv" <<'P'
import csv, sys
print(" ".join("%s%s" % (r["job_id"], r["segment"]) for r in csv.DictReader(open(sys.argv[1]))))
P
)
	[ "$live" = "${expect[$order]}" ] && [ "$sim" = "${expect[$order]}" ] \
	  || fail "$order: start order live '$live', simulated '$sim', expected '${expect[$order]}'"
	echo "test_order_live: $order: $live (live and simulated)"
done
echo "test_order_live: ok"
