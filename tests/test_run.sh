#!/usr/bin/env bash
# test_run.sh - `relish run` end to end with real processes and a real
# SQLite file: a ctrial experiment (12 trials, ASHA rungs 1, 3, 9, eta 3,
# 4 segments at a time on a host of 200 MiB and 2 CPUs) runs to completion;
# the best trial printed is the best in the store; every trial is final; and
# the reservations of segments that overlapped in time never exceeded the
# device's memory, computed from the store with an SQL self-join.
set -euo pipefail
: "${RELISH:?path of the relish binary}" "${RELISH_BUILD:?build directory}"
PY=/usr/bin/python3
work=$(mktemp -d /tmp/relish-test-run-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset RELISH_DEVICES CUDA_MPS_PIPE_DIRECTORY

cat >"$work/devices.yaml" <<'D'
host:
  memory: 200MiB
  cpus: 2
D
cat >"$work/exp.yaml" <<S
name: runtest
objective: {metric: accuracy, mode: max}
search:
  algorithm: random
  seed: 7
  max_trials: 12
  max_concurrent: 4
  space:
    x: {type: uniform, low: 0.0, high: 1.0}
    y: {type: uniform, low: -5.0, high: 5.0}
schedule: {algorithm: asha, resource: epoch, min: 1, max: 9, reduction_factor: 3}
trial:
  command: ["$RELISH_BUILD/ctrial", "--x", "{x}", "--y", "{y}", "--sleep-ms", "30"]
  resources: {memory: 64MiB, cpus: 0.5}
sharing: {policy: pack}
S

# Not a terminal: plain progress lines on stderr.
"$RELISH" run "$work/exp.yaml" --db "$work/r.db" --devices "$work/devices.yaml" \
  >"$work/out" 2>"$work/err" || fail "relish run exited $?: $(cat "$work/err")"
grep -q '^runtest: trial [0-9]* (index [0-9]*, completed): accuracy = ' "$work/out" \
  || fail "no best line: $(cat "$work/out")"
grep -q 'segment 0-1 completed accuracy=' "$work/err" || fail "no progress lines: $(cat "$work/err")"
ls -d "$work"/relish-runs/runtest.*/trial-0/ckpt >/dev/null 2>&1 || fail "no checkpoint folder next to the db"

"$RELISH" best --db "$work/r.db" --json >"$work/best.json"
"$PY" - "$work/r.db" "$work/best.json" <<'P'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
best = json.load(open(sys.argv[2]))
def check(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)
check(set(best) >= {"experiment", "trial_id", "index", "status", "params", "objective", "resource"},
      "best --json keys: %s" % sorted(best))
check(best["experiment"] == "runtest" and best["status"] == "completed", str(best))
check(set(best["params"]) == {"x", "y"}, "params %s" % best["params"])
check(best["objective"]["metric"] == "accuracy" and best["objective"]["mode"] == "max", str(best))
check(best["resource"] == 9, "best resource %s" % best["resource"])
mx = db.execute("SELECT max(objective) FROM trials WHERE status='completed'").fetchone()[0]
check(best["objective"]["value"] == mx, "best %s != max over completed %s" % (best["objective"]["value"], mx))

# Every trial final; 12 of them; experiment done.
st = dict(db.execute("SELECT status, count(*) FROM trials GROUP BY status").fetchall())
check(sum(st.values()) == 12, "trials %s" % st)
check(set(st) <= {"completed", "stopped"}, "non-final trials %s" % st)
check(st.get("completed", 0) >= 1, "no completed trial %s" % st)
check(db.execute("SELECT status FROM experiments").fetchone()[0] == "done", "experiment not done")
# Every segment ran and completed, with a placement, pid and times.
bad = db.execute("SELECT count(*) FROM segments WHERE status != 'completed' OR pid <= 0 "
                 "OR started_at IS NULL OR ended_at IS NULL OR mem_reserved_mib != 64 "
                 "OR device != 'host'").fetchone()[0]
check(bad == 0, "%d segments not completed/placed as expected" % bad)
# RELISH_TRIAL_ID is "t" + the trial's id in the store (ctrial logs it).
for t, log in db.execute("SELECT trial_id, log_path FROM segments").fetchall():
    text = open(log).read()
    check(("ctrial: trial t%d\n" % t) in text, "trial %d: log says %r" % (t, text[:200]))
# ASHA with eta 3 over rungs 1, 3, 9: every trial's first segment is [0,1];
# continuations start where the previous one ended.
rows = db.execute("SELECT trial_id, seq, resource_from, resource_to FROM segments "
                  "ORDER BY trial_id, seq").fetchall()
prev = {}
for t, seq, a, b in rows:
    check(a == prev.get(t, 0), "trial %d seg %d starts at %s, expected %s" % (t, seq, a, prev.get(t, 0)))
    check(b in (1, 3, 9), "segment end %s is not a rung" % b)
    prev[t] = b
# Metrics were stored with their resource.
n = db.execute("SELECT count(*) FROM metrics WHERE name='accuracy'").fetchone()[0]
check(n == sum(b - a for _, _, a, b in rows), "accuracy rows %d" % n)

# Memory: at the instant each segment started, the reservations of the
# segments running on its device (started at or before, not yet ended) sum
# to at most the device's memory (200 MiB here: at most 3 of 64 MiB).
worst = db.execute("""
    SELECT a.id, a.device, sum(b.mem_reserved_mib) AS reserved, d.mem_total_mib
    FROM segments a
    JOIN segments b ON b.device = a.device
                   AND b.started_at <= a.started_at AND a.started_at < b.ended_at
    JOIN devices d ON d.uuid = a.device
    GROUP BY a.id ORDER BY reserved DESC LIMIT 1""").fetchone()
check(worst is not None, "no overlapping segments found")
check(worst[2] <= worst[3], "over-committed: %s" % (worst,))
check(worst[2] > 64, "segments never shared the host (max reserved %s)" % (worst[2],))
P

# Running it again: already done, prints the same best, exit 0.
"$RELISH" run "$work/exp.yaml" --db "$work/r.db" --devices "$work/devices.yaml" --quiet \
  >"$work/out2" 2>"$work/err2" || fail "second run exited $?"
cmp -s "$work/out" "$work/out2" || fail "second run printed another best: $(cat "$work/out2")"

# The same name with another spec is refused (exit 2), naming db and experiment.
sed 's/seed: 7/seed: 8/' "$work/exp.yaml" >"$work/exp2.yaml"
set +e
"$RELISH" run "$work/exp2.yaml" --db "$work/r.db" --devices "$work/devices.yaml" 2>"$work/err3"
rc=$?
set -e
[ $rc -eq 2 ] || fail "changed spec: exit $rc, expected 2"
grep -q "runtest.*already exists in $work/r.db" "$work/err3" || fail "message: $(cat "$work/err3")"

# trial.env values get their placeholders replaced (docs/spec.md), as the
# arguments do, and verbatim: no shell expands "$HOME" on the way.
cat >"$work/env.yaml" <<'S'
name: envtest
objective: {metric: accuracy, mode: max}
search:
  algorithm: grid
  space:
    x: {type: choice, values: [0.25]}
trial:
  command: ["/bin/sh", "-c", 'printf "EV=%s\n" "$EV"; echo "RELISH epoch=1 accuracy=$1"', "sh", "{x}"]
  env: {EV: "[x={x}] TID=[{trial_id}] RES=[{resource_from}-{resource_to}] $HOME {{x}}"}
S
"$RELISH" run "$work/env.yaml" --db "$work/env.db" --devices "$work/devices.yaml" --quiet \
  >/dev/null 2>"$work/env.err" || fail "env run exited $?: $(cat "$work/env.err")"
"$PY" - "$work/env.db" <<'P'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
(tid, log), = db.execute("SELECT trial_id, log_path FROM segments").fetchall()
want = "EV=[x=0.25] TID=[t%d] RES=[0-1] $HOME {x}\n" % tid
text = open(log).read()
if want not in text:
    sys.exit("FAIL: trial.env: wanted %r in the log, got %r" % (want, text[:300]))
P

# A trial's setsid grandchild ends with its segment (docs/trials.md,
# "Descendants"), whichever confinement this machine gives; with the /proc
# fallback too, which relish announces.
cat >"$work/gc.yaml" <<'S'
name: gctest
objective: {metric: accuracy, mode: max}
search:
  algorithm: grid
  space:
    x: {type: choice, values: [1]}
trial:
  command: ["/bin/sh", "-c", 'setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! >"$RELISH_CHECKPOINT_DIR/gc.pid"; sleep 0.6; echo "RELISH epoch=1 accuracy=1"']
S
for confine in "" proc; do
  rm -rf "$work/gc.db"* "$work"/relish-runs/gctest.*
  RELISH_CONFINE=$confine "$RELISH" run "$work/gc.yaml" --db "$work/gc.db" --devices "$work/devices.yaml" \
    >"$work/gc.out" 2>"$work/gc.err" || fail "grandchild run ($confine) exited $?: $(cat "$work/gc.err")"
  if [ "$confine" = proc ]; then
    grep -q "trials' descendants: /proc tracking" "$work/gc.err" || fail "no fallback notice: $(cat "$work/gc.err")"
  fi
  gc=$(cat "$work"/relish-runs/gctest.*/trial-*/ckpt/gc.pid)
  for _ in $(seq 50); do
    state=$(awk '{print $3}' "/proc/$gc/stat" 2>/dev/null || echo gone)
    [ "$state" = gone ] || [ "$state" = Z ] && break
    sleep 0.05
  done
  [ "$state" = gone ] || [ "$state" = Z ] || fail "setsid grandchild $gc outlived its trial (${confine:-default}, state $state)"
done

# Usage errors are exit 2.
set +e
"$RELISH" run 2>/dev/null; rc1=$?
"$RELISH" run "$work/exp.yaml" --max-concurrent 0 2>/dev/null; rc2=$?
"$RELISH" run "$work/missing.yaml" --db "$work/x.db" 2>/dev/null; rc3=$?
set -e
[ "$rc1$rc2$rc3" = 222 ] || fail "usage exits $rc1 $rc2 $rc3"
echo "test_run: ok"
