#!/usr/bin/env bash
# test_run_learnt.sh - what the scheduler learnt survives a restart (the
# store's learnt table, docs/scheduling.md "Kept across restarts").  One
# stand-in GPU of 4 GiB whose NVML stand-in reports every process 100 %
# busy, and four heavy trials of the engine stand-in
# (tests/support/gpu_engine_trial.sh: two heavy kernels on one device take
# turns, so side by side they lose).  The first run knows nothing: the
# model refuses a second heavy trial beside the first, nothing else has a
# device, so it time-slices beside it, and the pair is measured to lose
# (checked: some heavy segments overlapped, and the learnt table holds the
# pairs and the pair of groups, below 0.6 each).  A second experiment of
# the same trials on the same database starts with those rows: no two of
# its segments share the device.  A third, on a copy of the database
# without the learnt rows (profiles kept), shares again: what keeps them
# apart is the table, not the profiles.  Damaged rows are said and left
# out, and the run goes on.  A store with more profiles than the core
# remembers keeps the newest at start.
set -euo pipefail
. "$RELISH_SRC/tests/support/fake_gpus.sh" learnt
cat >"$work/nvml" <<S
driver 550.54.15
device GPU-fake-0 4096 NVIDIA Stand-in 4GB
state $work/state
busy
S
trial=$RELISH_SRC/tests/support/gpu_engine_trial.sh
spec() { # NAME
	cat <<S
name: $1
objective: {metric: accuracy, mode: max}
search:
  algorithm: grid
  max_trials: 2
  max_concurrent: 2
  space:
    kind: {type: choice, values: [heavy]}
    mem: {type: choice, values: [500]}
    rep: {type: choice, values: [1, 2]}
schedule: {algorithm: none, resource: epoch, max: 4, segment: 1}
trial:
  command: ["/bin/sh", "$trial", "{kind}", "{mem}", "$work/state"]
  resources: {gpus: 1, cpus: 0.1}
  retries: 0
sharing: {policy: relish}
S
}
run() { # NAME DB
	spec "$1" >"$work/$1.yaml"
	"$RELISH" run "$work/$1.yaml" --db "$2" >"$work/$1.out" 2>"$work/$1.err" \
	  || fail "relish run $1 exited $?: $(tail -5 "$work/$1.err")"
}
# Seconds of segments of experiment NAME side by side (one device): the
# overlaps longer than a twentieth of the shorter segment (the core's
# noise: a segment starting as another ends is no sharing).
shared() { # DB NAME
	"$PY" - "$1" "$2" <<'P'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("""
    SELECT s.started_at, s.ended_at, s.status FROM segments s
    JOIN trials t ON t.id = s.trial_id JOIN experiments e ON e.id = t.experiment_id
    WHERE e.name = ?""", (sys.argv[2],)).fetchall()
if any(r[2] != "completed" for r in rows) or len(rows) != 8:
    sys.exit("FAIL: %s: segments %s" % (sys.argv[2], rows))
tot = 0
for i, a in enumerate(rows):
    for b in rows[i + 1:]:
        ov = min(a[1], b[1]) - max(a[0], b[0])
        if ov > 0.05 * min(a[1] - a[0], b[1] - b[0]):
            tot += ov
print("%.2f" % tot)
P
}

run first "$work/a.db"
s1=$(shared "$work/a.db" first)
"$PY" -c "import sys; sys.exit(not $s1 > 0)" || fail "the first run never shared: nothing to learn"
"$PY" - "$work/a.db" <<'P'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
kinds = dict(db.execute("SELECT kind, count(*) FROM learnt GROUP BY kind").fetchall())
if kinds.get("pair", 0) < 2 or kinds.get("groups", 0) != 1 or kinds.get("las", 0) < 1:
    sys.exit("FAIL: learnt rows %s" % kinds)
g = db.execute("SELECT n, d, d_max, s_min, s_max FROM learnt WHERE kind = 'groups'").fetchone()
if not (g[0] >= 2 and g[4] < 0.6):
    sys.exit("FAIL: the heavy pair of groups was not measured to lose: %s" % (g,))
for n, d in db.execute("SELECT n, d FROM learnt WHERE kind = 'pair'"):
    if not (n >= 1 and 1 / (1 + d) < 0.6):
        sys.exit("FAIL: a heavy pair not measured to lose: n %s, d %s" % (n, d))
P
cp "$work/a.db" "$work/b.db"
sqlite3 "$work/b.db" "DELETE FROM learnt"

run second "$work/a.db"
s2=$(shared "$work/a.db" second)
[ "$s2" = "0.00" ] || fail "heavy trials shared $s2 s with what was learnt given back"

run third "$work/b.db"
s3=$(shared "$work/b.db" third)
"$PY" -c "import sys; sys.exit(not $s3 > 0)" || fail "without the learnt rows the trials never shared: the check has no teeth"

# A damaged row is said and left out; the rest is used.
sqlite3 "$work/a.db" "INSERT INTO learnt VALUES('pair', 'zz', '1', 1, 0.5, NULL, NULL, NULL, 0);
  INSERT INTO learnt VALUES('groups', '1', '2', 2, 0.9, 0.5, 0.6, 0.7, 0)"
run fourth "$work/a.db"
grep -q "2 rows of the learnt table left out (the first: learnt groups need" "$work/fourth.err" \
  || fail "damaged rows not said: $(cat "$work/fourth.err")"
s4=$(shared "$work/a.db" fourth)
[ "$s4" = "0.00" ] || fail "heavy trials shared $s4 s beside damaged rows"
# Bounded: a store holding more profiles than the core remembers
# (SCHED_LEARN_MAX, 65,536) keeps the newest at start, this run's own
# among them, and what they and the learnt rows say is still used.
real=$(sqlite3 "$work/a.db" "SELECT count(*) FROM profiles")
sqlite3 "$work/a.db" "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 70000)
  INSERT INTO profiles(shape, family, n, peak_mem_mib, updated_at)
  SELECT printf('%016x', 1000000000 + i), '00000000000000ff', 1, 100, i FROM c"
run fifth "$work/a.db"
read -r total oldest newest kept <<<"$(sqlite3 -separator ' ' "$work/a.db" "SELECT count(*),
  (SELECT count(*) FROM profiles WHERE updated_at = 1),
  (SELECT count(*) FROM profiles WHERE updated_at = 70000),
  (SELECT count(*) FROM profiles WHERE updated_at > 1000000) FROM profiles")"
[ "$total" = 65536 ] && [ "$oldest" = 0 ] && [ "$newest" = 1 ] && [ "$kept" = "$real" ] \
  || fail "profiles not trimmed to the newest 65,536: $total rows, the oldest $oldest, the newest $newest, this test's $kept of $real"
s5=$(shared "$work/a.db" fifth)
[ "$s5" = "0.00" ] || fail "heavy trials shared $s5 s after the profiles were trimmed"
echo "test_run_learnt: shared s: first run $s1, second (rows given back) $s2, without the rows $s3"
echo "test_run_learnt: ok"
