#!/usr/bin/env bash
# test_run_gpu_policies.sh - the three sharing policies on one small fake-GPU
# workload (two stand-in 8 GiB GPUs; 8 trials of
# tests/support/gpu_family_trial.sh, 300 + 4*batch MiB at 25 % SM, a
# declared hint of 1.5 GiB).  From the store, with SQL: under `exclusive`
# no two segments ever overlap on one GPU (at most 1 running per device at
# every start) and every reservation is the whole device; under `pack` and
# `relish` segments share a GPU, and reservations never sum past 8 GiB.
set -euo pipefail
. "$RELISH_SRC/tests/support/fake_gpus.sh" gpu-policies

for policy in exclusive pack relish; do
	cat >"$work/$policy.yaml" <<S
name: $policy
objective: {metric: accuracy, mode: max}
search:
  algorithm: random
  seed: 11
  max_trials: 8
  max_concurrent: 8
  space:
    batch: {type: choice, values: [32, 128, 256]}
schedule: {algorithm: none, resource: epoch, max: 2}
trial:
  command: ["/bin/sh", "$RELISH_SRC/tests/support/gpu_family_trial.sh", "{batch}", "$work/state"]
  resources: {gpus: 1, gpu_memory: 1536MiB, cpus: 0.1}
  retries: 0
sharing: {policy: $policy}
S
	# One database per policy: profiles measured under one must not help another.
	"$RELISH" run "$work/$policy.yaml" --db "$work/$policy.db" >"$work/out" 2>"$work/err" \
	  || fail "$policy: relish run exited $?: $(tail -5 "$work/err")"
done

"$PY" - "$work" <<'P'
import sqlite3, sys
def check(c, w):
    if not c:
        sys.exit("FAIL: " + w)
out = []
for policy in ("exclusive", "pack", "relish"):
    db = sqlite3.connect("%s/%s.db" % (sys.argv[1], policy))
    st = dict(db.execute("SELECT status, count(*) FROM trials GROUP BY status").fetchall())
    check(st == {"completed": 8}, "%s: trials %s" % (policy, st))
    # Per segment start: how many segments ran on its device then, and what they reserved.
    rows = db.execute("""
        SELECT a.id, a.device, count(b.id), sum(b.mem_reserved_mib), a.basis, a.mem_reserved_mib
        FROM segments a JOIN segments b ON b.device = a.device
             AND b.started_at <= a.started_at AND a.started_at < b.ended_at
        GROUP BY a.id""").fetchall()
    most = max(r[2] for r in rows)
    check(max(r[3] for r in rows) <= 8192, "%s over-committed: %s" % (policy, rows))
    if policy == "exclusive":
        check(most == 1, "exclusive shared a device: %s" % rows)
        check(all(r[5] == 8192 for r in rows), "exclusive reservations %s" % rows)
    else:
        check(most >= 2, "%s never shared a device: %s" % (policy, rows))
    wall = db.execute("SELECT max(ended_at) - min(started_at) FROM segments").fetchone()[0]
    out.append("%s: at most %d per GPU, %.1f s" % (policy, most, wall))
print("test_run_gpu_policies: " + "; ".join(out))
P
echo "test_run_gpu_policies: ok"
