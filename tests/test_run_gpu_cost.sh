#!/usr/bin/env bash
# test_run_gpu_cost.sh - sharing that has a true cost, live (issue 26 item
# 4).  Two stand-in GPUs of 4 GiB whose NVML stand-in reports every running
# process 100 % busy (`busy`: time-based utilisation, as the real library
# reports for most training processes), and a stand-in trial
# (tests/support/gpu_engine_trial.sh) whose kernels hold an exclusive
# per-device engine: light trials share a device almost for free, two heavy
# ones lose by sharing.  First the stand-ins themselves, timed (no relish):
# a light pair on one device takes well under 1.5 times one alone, a heavy
# pair at least 1.9 times (together they gain nothing: about 2.2x
# measured), so the cost is real.  Then relish runs 8
# trials, half light and half heavy, 500 or 1,200 MiB, 4 one-epoch
# segments each, on the two GPUs; checked from the store with SQL: every
# trial completed, no device's reservations ever summed past 4 GiB, light
# trials shared a device with light ones (relish packs what gains, once
# measured), and no two heavy trials ran side by side in more than
# explore_max (2) of their segments (docs/scheduling.md, Exploration: a
# pair measured to lose is separated at its next boundary, and a pair of
# groups measured to lose is not tried again).
set -euo pipefail
. "$RELISH_SRC/tests/support/fake_gpus.sh" gpu-cost
cat >"$work/nvml" <<S
driver 550.54.15
device GPU-fake-0 4096 NVIDIA Stand-in 4GB
device GPU-fake-1 4096 NVIDIA Stand-in 4GB
state $work/state
busy
S
trial=$RELISH_SRC/tests/support/gpu_engine_trial.sh

# The stand-in's cost, measured: 2 epochs of 4 steps, 2 s alone.
timed() { # KIND... : seconds for one trial of each KIND at once on GPU 0
	local t0 t1
	t0=$(date +%s.%N)
	for k in "$@"; do
		CUDA_VISIBLE_DEVICES=GPU-fake-0 RELISH_GPU_MEMORY_MIB=4096 RELISH_RESOURCE_FROM=0 \
		  RELISH_RESOURCE_TO=2 sh "$trial" "$k" 100 "$work/solo" >/dev/null &
	done
	wait
	t1=$(date +%s.%N)
	"$PY" -c "print('%.2f' % ($t1 - $t0))"
}
: >"$work/solo"
alone=$(timed heavy)
light2=$(timed light light)
heavy2=$(timed heavy heavy)
echo "stand-in: one alone ${alone} s, two light together ${light2} s, two heavy together ${heavy2} s"
"$PY" -c "import sys; sys.exit(not $light2 < 1.5 * $alone)" || fail "light trials gain nothing by sharing: $light2 s against $alone s alone"
"$PY" -c "import sys; sys.exit(not $heavy2 > 1.9 * $alone)" || fail "heavy trials gain by sharing: $heavy2 s against $alone s alone"
set +e
sh "$trial" medium 100 "$work/solo" 2>"$work/err"; rc=$?
set -e
[ "$rc" = 2 ] && grep -q "expected light, heavy or free, got 'medium'" "$work/err" || fail "bad KIND: exit $rc"

cat >"$work/cost.yaml" <<S
name: cost
objective: {metric: accuracy, mode: max}
search:
  algorithm: grid
  max_trials: 8
  max_concurrent: 8
  space:
    kind: {type: choice, values: [light, heavy]}
    mem: {type: choice, values: [500, 1200]}
    rep: {type: choice, values: [1, 2]}
schedule: {algorithm: none, resource: epoch, max: 4, segment: 1}
trial:
  command: ["/bin/sh", "$trial", "{kind}", "{mem}", "$work/state"]
  resources: {gpus: 1, cpus: 0.1}
  retries: 0
sharing: {policy: relish}
S
"$RELISH" run "$work/cost.yaml" --db "$work/cost.db" >"$work/out" 2>"$work/err" \
  || fail "relish run exited $?: $(tail -5 "$work/err")"

"$PY" - "$work/cost.db" <<'P'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
def check(c, w):
    if not c:
        sys.exit("FAIL: " + w)
st = dict(db.execute("SELECT status, count(*) FROM trials GROUP BY status").fetchall())
check(st == {"completed": 8}, "trials %s" % st)
bad = db.execute("SELECT count(*) FROM segments WHERE status != 'completed'").fetchone()[0]
check(bad == 0, "%d segments did not complete" % bad)
rows = db.execute("""
    SELECT a.id, a.device, count(b.id), sum(b.mem_reserved_mib)
    FROM segments a JOIN segments b ON b.device = a.device
         AND b.started_at <= a.started_at AND a.started_at < b.ended_at
    GROUP BY a.id""").fetchall()
check(max(r[3] for r in rows) <= 4096, "over-committed: %s" % rows)
# Seconds of each kind of pair side by side on one device (for the record).
kinds = {t: json.loads(p)["kind"] for t, p in db.execute("SELECT id, params_json FROM trials")}
share = {}
for ta, tb, s in db.execute("""
    SELECT a.trial_id, b.trial_id, min(a.ended_at, b.ended_at) - max(a.started_at, b.started_at)
    FROM segments a JOIN segments b ON b.device = a.device AND b.id > a.id
    WHERE a.started_at < b.ended_at AND b.started_at < a.ended_at"""):
    k = "-".join(sorted((kinds[ta], kinds[tb])))
    share[k] = share.get(k, 0) + s
# Heavy beside heavy: at most explore_max (2) overlapping segments per
# pair of heavy trials (each trial is a shape of its own: rep is in it).
hh = {}
for ta, tb in db.execute("""
    SELECT a.trial_id, b.trial_id FROM segments a JOIN segments b
      ON b.device = a.device AND b.id > a.id
    WHERE a.started_at < b.ended_at AND b.started_at < a.ended_at"""):
    if kinds[ta] == kinds[tb] == "heavy":
        k = (min(ta, tb), max(ta, tb))
        hh[k] = hh.get(k, 0) + 1
check(all(n <= 2 for n in hh.values()), "heavy trials shared beyond the exploration: %s" % hh)
check(share.get("light-light", 0) > 0, "light trials never shared a device: %s" % share)
wall = db.execute("SELECT max(ended_at) - min(started_at) FROM segments").fetchone()[0]
print("test_run_gpu_cost: 8 trials completed in %.1f s, at most %d segments per GPU, shared s %s"
      % (wall, max(r[2] for r in rows), {k: round(v, 1) for k, v in sorted(share.items())}))
P
echo "test_run_gpu_cost: ok"
