#!/usr/bin/env bash
# test_faults.sh - fault injection against the real binary (issue 14): what
# must hold whatever happens to relish and its state.
#   two     a second `relish run` on one database is refused at once (exit 5,
#           naming the db and the holder); read commands work meanwhile; the
#           first run is untouched
#   bypass  the lock file removed by hand, so a second driver gets in: the
#           first notices it was taken over and stops (exit 5), no hang
#   early   SIGTERM while relish reads its spec (a FIFO), before its loop
#           runs: exit 130 and the experiment interrupted, as later (it
#           was the signal's default action: exit 143); then resumed
#   dbfull  the database on a 2 MiB tmpfs that fills mid-run: one clear error,
#           exit 4, promptly; after space is freed the run resumes and every
#           metric line the trials printed is stored, once
#   logfull the runs folder on a full tmpfs: said once, the run finishes
#   twice   SIGINT and kill -9 in the middle of a segment of a trial that
#           checkpoints only at segment ends (its re-run reports the same
#           epochs again): each value stored once, in the db and in export
#   kill9   kill -9 at random points, several times, in oneshot, warm and
#           worker modes: nothing finished lost, no value twice, no orphan
#   rofs    a finished database on read-only media: status, trials, best,
#           export work and write nothing
#   grandchild relish killed while a trial's setsid grandchild runs: the
#           restart ends it
#   lastline a metric line without its final newline before exit counts
# The tmpfs cases need mount(2) (root; CI runs as root): without it they
# are skipped, and say so.
set -euo pipefail
: "${RELISH:?path of the relish binary}" "${RELISH_BUILD:?build directory}"
PY=/usr/bin/python3
work=$(mktemp -d /tmp/relish-test-faults-XXXXXX)
pids=()
mounts=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  for m in "${mounts[@]}"; do umount -l "$m" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
skipped=()
unset RELISH_DEVICES CUDA_MPS_PIPE_DIRECTORY
printf 'host:\n  memory: 2GiB\n  cpus: 2\n' >"$work/devices.yaml"
SEED=${FAULTS_SEED:-$RANDOM}
RANDOM=$SEED
echo "test_faults: seed $SEED (FAULTS_SEED=$SEED repeats the random kill points)"

spec() { # NAME MODE SLEEP_MS TRIALS [CTRIAL_FLAG...]
  local name=$1 mode=$2 sleep=$3 trials=$4
  shift 4
  local extra=""
  for a in "$@"; do extra="$extra, \"$a\""; done
  cat >"$work/$name.yaml" <<S
name: $name
objective: {metric: accuracy, mode: max}
search: {algorithm: random, seed: 5, max_trials: $trials, max_concurrent: 2,
         space: {x: {type: uniform, low: 0.0, high: 1.0}, y: {type: uniform, low: -5.0, high: 5.0}}}
schedule: {algorithm: asha, resource: epoch, min: 1, max: 9, reduction_factor: 3}
trial:
  command: ["$RELISH_BUILD/ctrial", "--x", "{x}", "--y", "{y}", "--sleep-ms", "$sleep"$extra]
  mode: $mode
  resources: {memory: 64MiB, cpus: 0.5}
sharing: {policy: pack}
S
  if [ "$mode" = worker ]; then
    # Worker mode takes parameters from its assignments, not argv.
    sed -i 's/"--x", "{x}", "--y", "{y}", //' "$work/$name.yaml"
  fi
}

q() { "$PY" -c 'import sqlite3,sys; r=sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone(); print(r[0] if r and r[0] is not None else 0)' "$@"; }

# wait_sql DB CONDITION [PID]: until the query is true (20 s at most);
# PID must stay alive meanwhile.
wait_sql() {
  for _ in $(seq 400); do
    if [ -f "$1" ] && [ "$(q "$1" "$2" 2>/dev/null || echo 0)" != 0 ]; then return 0; fi
    if [ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null; then fail "relish ended before: $2"; fi
    sleep 0.05
  done
  fail "timed out waiting for: $2"
}

# wait_exit PID SECONDS: its exit status in ec, or fail when it still runs.
wait_exit() {
  local i
  for i in $(seq $(($2 * 20))); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.05
  done
  kill -0 "$1" 2>/dev/null && fail "pid $1 still running after $2 s (hung)"
  ec=0
  wait "$1" || ec=$?
}

try_mount() { # DIR SIZE
  mkdir -p "$1"
  if mount -t tmpfs -o "size=$2" "relish-test" "$1" 2>/dev/null; then
    mounts+=("$1")
    return 0
  fi
  return 1
}

# Every stored value once; every metric line of every segment log stored
# (with its value: ctrial's curves repeat exactly); nothing left running.
check_db() { # NAME DB [done]
  "$PY" - "$1" "$2" "${3:-}" <<'P'
import sqlite3, sys, re, os
name, path, want_done = sys.argv[1], sys.argv[2], sys.argv[3]
db = sqlite3.connect(path)
def check(c, w):
    if not c: sys.exit("FAIL: %s: %s" % (name, w))
dup = db.execute("SELECT trial_id, name, resource, count(*) FROM metrics GROUP BY 1, 2, 3 "
                 "HAVING count(*) > 1").fetchall()
check(not dup, "values stored more than once: %s" % dup[:5])
stored = {(t, n, r): v for t, n, r, v in db.execute("SELECT trial_id, name, resource, value FROM metrics")}
seen = 0
for tid, lp in db.execute("SELECT trial_id, log_path FROM segments WHERE log_path IS NOT NULL"):
    if not os.path.exists(lp):
        continue
    for line in open(lp, errors="replace"):
        if not line.startswith("RELISH "):
            continue
        kv = dict(p.split("=", 1) for p in line.split()[1:])
        r = float(kv["epoch"])
        seen += 1
        for n, v in kv.items():
            check((tid, n, r) in stored, "trial %d reported %s at epoch %g (in %s), not stored" % (tid, n, r, lp))
            check(abs(stored[(tid, n, r)] - float(v)) < 1e-9, "trial %d %s@%g: stored %s, logged %s" % (tid, n, r, stored[(tid, n, r)], v))
check(seen > 0, "no metric line in any log")
# A completed trial has a value at every epoch it trained.
for tid, done in db.execute("SELECT id, resource_done FROM trials WHERE status IN ('completed', 'stopped')"):
    for e in range(1, int(done) + 1):
        check((tid, "accuracy", float(e)) in stored, "trial %d has no accuracy at epoch %d" % (tid, e))
if want_done:
    check(db.execute("SELECT status FROM experiments").fetchone()[0] == "done", "experiment not done")
    check(db.execute("SELECT count(*) FROM segments WHERE status IN ('running','planned')").fetchone()[0] == 0,
          "segments left running")
print(len(stored), seen)
P
}

# No process relish recorded (pid + start time) is alive.
check_no_orphans() { # NAME DB
  "$PY" - "$1" "$2" <<'P'
import sqlite3, sys
name, path = sys.argv[1], sys.argv[2]
for pid, st in sqlite3.connect(path).execute("SELECT pid, pid_start_time FROM segments WHERE pid > 0"):
    try:
        f = open("/proc/%d/stat" % pid).read()
    except OSError:
        continue
    fields = f[f.rindex(")") + 2:].split()
    if int(fields[19]) == st and fields[0] != "Z":
        sys.exit("FAIL: %s: process %d of a segment is still alive" % (name, pid))
P
}

run_bg() { # NAME DB OUT [ARGS...]: start relish run in the background; sets rp
  local name=$1 db=$2 out=$3
  shift 3
  "$RELISH" run "$work/$name.yaml" --db "$db" --devices "$work/devices.yaml" "$@" \
    >"$out.out" 2>"$out.err" &
  rp=$!
  pids+=("$rp")
}

# FAULTS_ONLY="two dbfull ..." runs only those cases.
only() { [ -z "${FAULTS_ONLY:-}" ] || [[ " $FAULTS_ONLY " == *" $1 "* ]]; }

# ---- two: a second run on one database -----------------------------------
if only two; then
  spec two oneshot 150 4
  db="$work/two.db"
  run_bg two "$db" "$work/two1" --quiet
  p1=$rp
  wait_sql "$db" "SELECT count(*) FROM segments WHERE status='running' AND pid > 0" "$p1"
  rc=0
  timeout 10 "$RELISH" run "$work/two.yaml" --db "$db" --devices "$work/devices.yaml" --quiet \
    >"$work/two2.out" 2>"$work/two2.err" || rc=$?
  [ "$rc" = 5 ] || fail "two: the second run exited $rc, expected 5: $(cat "$work/two2.err")"
  [ "$(wc -l <"$work/two2.err")" = 1 ] || fail "two: expected one error line: $(cat "$work/two2.err")"
  grep -q "^relish run: $db is in use by another relish (pid $p1, since [0-9-]* [0-9:]*); " "$work/two2.err" \
    || fail "two: message: $(cat "$work/two2.err")"
  # Readers are not drivers.
  "$RELISH" status --db "$db" >"$work/two.status" || fail "two: status while running: $?"
  grep -q "^two " "$work/two.status" || grep -q "two" "$work/two.status" || fail "two: status: $(cat "$work/two.status")"
  "$RELISH" trials --db "$db" >/dev/null || fail "two: trials while running"
  wait_exit "$p1" 60; rc=$ec
  [ "$rc" = 0 ] || fail "two: the first run exited $rc: $(cat "$work/two1.err")"
  [ "$(q "$db" "SELECT count(*) FROM segments WHERE status='lost'")" = 0 ] \
    || fail "two: the refused run reclaimed segments"
  [ "$(q "$db" "SELECT count(*) FROM drivers")" = 1 ] || fail "two: the refused run registered"
  check_db two "$db" done >/dev/null
  echo "two: second run refused (exit 5), first finished"
fi

# ---- bypass: the lock removed, a second driver gets in --------------------
if only bypass; then
  spec bypass oneshot 200 4
  db="$work/bypass.db"
  run_bg bypass "$db" "$work/bypass1" --quiet
  p1=$rp
  wait_sql "$db" "SELECT count(*) FROM segments WHERE status='running' AND pid > 0" "$p1"
  rm -f "$db-lock"
  run_bg bypass "$db" "$work/bypass2" --quiet
  p2=$rp
  wait_exit "$p1" 20; rc=$ec
  [ "$rc" = 5 ] || fail "bypass: the first run exited $rc, expected 5: $(cat "$work/bypass1.err")"
  grep -q "took over $db" "$work/bypass1.err" || fail "bypass: message: $(cat "$work/bypass1.err")"
  wait_exit "$p2" 60; rc=$ec
  [ "$rc" = 0 ] || fail "bypass: the second run exited $rc: $(cat "$work/bypass2.err")"
  echo "bypass: the first driver noticed the takeover and stopped (exit 5)"
fi

# ---- early: SIGTERM before the run has started ---------------------------
# The spec is a FIFO: relish is known to be reading it (the test's open for
# writing returns only then), after it watches for signals and before its
# loop runs; the SIGTERM sent then is answered as any later one: exit 130,
# the experiment interrupted, nothing run; the same command resumes it.
# It used to end relish by the signal's default action (exit 143), which a
# busy machine showed in dbfull's "SIGTERM while full" (issue 30, item 12).
if only early; then
  spec early oneshot 100 2
  db="$work/early.db"
  mkfifo "$work/early.fifo"
  "$RELISH" run "$work/early.fifo" --db "$db" --devices "$work/devices.yaml" --quiet \
    >"$work/early.out" 2>"$work/early.err" &
  rp=$!
  pids+=("$rp")
  exec 3>"$work/early.fifo"
  kill -TERM "$rp"
  cat "$work/early.yaml" >&3
  exec 3>&-
  wait_exit "$rp" 60; rc=$ec
  [ "$rc" = 130 ] || fail "early: SIGTERM while starting: exit $rc, expected 130: $(cat "$work/early.err")"
  grep -q "interrupted; run the same command again to resume" "$work/early.err" ||
    fail "early: message: $(cat "$work/early.err")"
  [ "$(q "$db" "SELECT count(*) FROM events WHERE kind = 'experiment.interrupted'")" = 1 ] ||
    fail "early: no experiment.interrupted event"
  rm -f "$work/early.fifo"
  cp "$work/early.yaml" "$work/early.fifo"
  rc=0
  "$RELISH" run "$work/early.fifo" --db "$db" --devices "$work/devices.yaml" --quiet \
    >"$work/early2.out" 2>"$work/early2.err" || rc=$?
  [ "$rc" = 0 ] || fail "early: resume exited $rc: $(cat "$work/early2.err")"
  check_db early "$db" done >/dev/null
  echo "early: SIGTERM before the loop: exit 130, resumed"
fi

# caught_term PID S: until PID catches SIGTERM (bit 15 of SigCgt in
# /proc/PID/status) or has exited; at most S seconds.
caught_term() {
  local i mask
  for i in $(seq $(($2 * 20))); do
    # gone, or a zombie (exited, not yet waited for): nothing to wait for
    mask=$(awk '/^State:/ && $2 == "Z" { z = 1 } /^SigCgt:/ { m = $2 } END { if (!z) print m }' \
      "/proc/$1/status" 2>/dev/null) || return 0
    [ -n "$mask" ] || return 0
    [ $(( 0x$mask & (1 << 14) )) != 0 ] && return 0
    sleep 0.05
  done
  fail "relish ($1) did not catch SIGTERM within $2 s"
}

# ---- dbfull: the database's disk fills mid-run ----------------------------
# One trial at a time, a line every 0.7 s: the disk fills between two lines,
# so the write that fails is the next line's; the trial checkpoints that
# epoch all the same, so its re-run never prints it again: only the log
# has it.
if only dbfull; then
  if try_mount "$work/fs1" 2m; then
    cat >"$work/dbfull.yaml" <<S
name: dbfull
objective: {metric: accuracy, mode: max}
search: {algorithm: random, seed: 3, max_trials: 2, max_concurrent: 1,
         space: {x: {type: uniform, low: 0.0, high: 1.0}, y: {type: uniform, low: -5.0, high: 5.0}}}
schedule: {algorithm: none, resource: epoch, max: 5}
trial:
  command: ["$RELISH_BUILD/ctrial", "--x", "{x}", "--y", "{y}", "--sleep-ms", "700"]
  resources: {memory: 64MiB, cpus: 0.5}
S
    db="$work/fs1/dbfull.db"
    runs="$work/dbfull-runs"
    run_bg dbfull "$db" "$work/dbfull1" --quiet --runs-dir "$runs"
    p1=$rp
    wait_sql "$db" "SELECT count(*) FROM metrics WHERE name = 'accuracy' AND resource >= 2" "$p1"
    dd if=/dev/zero of="$work/fs1/fill" bs=4k 2>/dev/null || true
    t0=$SECONDS
    wait_exit "$p1" 30; rc=$ec
    stop_s=$((SECONDS - t0))
    [ "$rc" = 4 ] || fail "dbfull: exited $rc, expected 4: $(cat "$work/dbfull1.err")"
    [ "$(wc -l <"$work/dbfull1.err")" = 1 ] || fail "dbfull: expected one error line: $(cat "$work/dbfull1.err")"
    grep -q "^relish run: $db: .*database or disk is full (free space on its file system)$" "$work/dbfull1.err" \
      || fail "dbfull: message: $(cat "$work/dbfull1.err")"
    check_no_orphans dbfull "$db"
    # Started again while the disk is still full: refused or stopped at
    # once by SIGTERM, never hung, and never ended by the signal itself
    # (143), whenever it comes: a moment after the start, before relish
    # has opened anything on a busy machine, or later ("early" above).
    # The signal goes once relish catches SIGTERM (its SigCgt in /proc, set
    # by live_signals_early right after the options): before that the
    # default action is what any program gets, and how long a busy machine
    # takes to get there is no property of relish.  It may have exited
    # (refused, exit 4) by then.
    run_bg dbfull "$db" "$work/dbfull3" --quiet --runs-dir "$runs"
    caught_term "$rp" 30
    kill -TERM "$rp" 2>/dev/null || true
    wait_exit "$rp" 15; rc=$ec
    [ "$rc" = 4 ] || [ "$rc" = 130 ] || fail "dbfull: SIGTERM while full: exit $rc: $(cat "$work/dbfull3.err")"
    rm -f "$work/fs1/fill"
    rc=0
    "$RELISH" run "$work/dbfull.yaml" --db "$db" --devices "$work/devices.yaml" --runs-dir "$runs" \
      >"$work/dbfull2.out" 2>"$work/dbfull2.err" || rc=$?
    [ "$rc" = 0 ] || fail "dbfull: resume exited $rc: $(cat "$work/dbfull2.err")"
    read -r nv nl < <(check_db dbfull "$db" done)
    back=$(q "$db" "SELECT group_concat(message, ' | ') FROM segments WHERE message LIKE '%taken back from its log%'")
    [ -n "$back" ] && [ "$back" != 0 ] || fail "dbfull: nothing taken back from the log"
    echo "dbfull: exit 4 ${stop_s} s after the disk filled; resumed: $nv values, $nl lines logged, none lost or twice ($back)"
  else
    skipped+=(dbfull)
  fi
fi

# ---- logfull: the runs folder's disk is full ------------------------------
if only logfull; then
  if try_mount "$work/fs2" 1m; then
    dd if=/dev/zero of="$work/fs2/fill" bs=4k 2>/dev/null || true
    spec logfull oneshot 0 3
    rc=0
    "$RELISH" run "$work/logfull.yaml" --db "$work/logfull.db" --devices "$work/devices.yaml" \
      --runs-dir "$work/fs2/runs" >"$work/logfull.out" 2>"$work/logfull.err" || rc=$?
    [ "$rc" = 0 ] || fail "logfull: exited $rc: $(cat "$work/logfull.err")"
    n=$(grep -c "writing segment logs under $work/fs2/runs failed (No space left on device)" "$work/logfull.err" || true)
    [ "$n" = 1 ] || fail "logfull: said $n times: $(cat "$work/logfull.err")"
    [ "$(q "$work/logfull.db" "SELECT count(*) FROM events WHERE kind='run.log_failed'")" = 1 ] \
      || fail "logfull: no run.log_failed event"
    [ "$(q "$work/logfull.db" "SELECT count(*) FROM trials WHERE status IN ('completed','stopped')")" = 3 ] \
      || fail "logfull: trials did not finish"
    echo "logfull: said once, run finished"
  else
    skipped+=(logfull)
  fi
fi

# ---- twice: interrupted mid-segment, re-run reports the same epochs -------
if only twice; then
  for how in INT KILL; do
    name=twice$how
    spec "$name" oneshot 120 3 --save-at-end
    db="$work/$name.db"
    run_bg "$name" "$db" "$work/${name}1" --quiet
    p1=$rp
    # In the middle of a continuation (3 -> 9), after it reported twice.
    wait_sql "$db" "SELECT count(*) FROM segments s WHERE s.status='running' AND s.resource_from = 3 AND (SELECT count(*) FROM metrics m WHERE m.segment_id = s.id AND m.name='accuracy') >= 2" "$p1"
    kill -s "$how" "$p1"
    wait_exit "$p1" 20; rc=$ec
    if [ "$how" = INT ]; then [ "$rc" = 130 ] || fail "$name: exited $rc, expected 130"; fi
    rc=0
    "$RELISH" run "$work/$name.yaml" --db "$db" --devices "$work/devices.yaml" --quiet \
      >"$work/${name}2.out" 2>"$work/${name}2.err" || rc=$?
    [ "$rc" = 0 ] || fail "$name: resume exited $rc: $(cat "$work/${name}2.err")"
    # The re-run started at 3 again and reported 4, 5 ... a second time.
    [ "$(q "$db" "SELECT count(*) FROM segments WHERE resource_from = 3 AND status IN ('cancelled','lost')")" -ge 1 ] \
      || fail "$name: no interrupted continuation"
    check_db "$name" "$db" done >/dev/null
    "$RELISH" export --db "$db" --what metrics --format csv >"$work/$name.csv"
    "$PY" - "$work/$name.csv" "$name" <<'P'
import csv, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
key = lambda r: (r.get("trial_id") or r.get("trial"), r["name"], r["resource"])
c = collections.Counter(key(r) for r in rows)
d = [k for k, n in c.items() if n > 1]
if not rows or d:
    sys.exit("FAIL: %s: export: %d rows, twice: %s" % (sys.argv[2], len(rows), d[:5]))
P
    echo "$name: interrupted mid-segment and resumed: every value once"
  done
fi

# ---- kill9: at random points, in every mode -------------------------------
if only kill9; then
  for mode in oneshot warm worker; do
    name=k9$mode
    spec "$name" "$mode" 250 9
    db="$work/$name.db"
    kills=0
    for i in 1 2 3 4; do
      run_bg "$name" "$db" "$work/$name.$i" --quiet
      sleep "$((RANDOM % 2)).$((2 + RANDOM % 8))"
      kill -0 "$rp" 2>/dev/null || break
      kill -9 "$rp"
      wait "$rp" 2>/dev/null || true
      kills=$((kills + 1))
    done
    rc=0
    "$RELISH" run "$work/$name.yaml" --db "$db" --devices "$work/devices.yaml" --quiet \
      >"$work/$name.out" 2>"$work/$name.err" || rc=$?
    [ "$rc" = 0 ] || fail "$name: final run exited $rc: $(cat "$work/$name.err")"
    read -r nv nl < <(check_db "$name" "$db" done)
    check_no_orphans "$name" "$db"
    [ "$(q "$db" "SELECT count(*) FROM trials WHERE status IN ('completed','stopped')")" = 9 ] \
      || fail "$name: not every trial finished"
    echo "$name: $kills kill -9, then done: $nv values, none lost or twice, no orphan"
  done
fi

# ---- rofs: a finished database on read-only media --------------------------
if only rofs; then
  if try_mount "$work/fs3" 8m; then
    spec rofs oneshot 0 4
    "$RELISH" run "$work/rofs.yaml" --db "$work/rofs.db" --devices "$work/devices.yaml" --quiet \
      >/dev/null 2>"$work/rofs.err" || fail "rofs: run: $(cat "$work/rofs.err")"
    cp "$work/rofs.db" "$work/fs3/ro.db"
    [ ! -e "$work/fs3/ro.db-wal" ] || fail "rofs: the finished db has a -wal file"
    mount -o remount,ro "$work/fs3" || fail "rofs: remount read-only"
    for c in status trials best profiles "logs 1" "export --format csv --what metrics"; do
      # shellcheck disable=SC2086
      "$RELISH" $c --db "$work/fs3/ro.db" >"$work/rofs.out" 2>"$work/rofs.err" \
        || fail "rofs: relish $c exited $?: $(cat "$work/rofs.err")"
      [ -s "$work/rofs.out" ] || fail "rofs: relish $c printed nothing"
    done
    "$RELISH" best --db "$work/fs3/ro.db" --json >"$work/rofs.best"
    "$RELISH" best --db "$work/rofs.db" --json >"$work/rw.best"
    cmp -s "$work/rofs.best" "$work/rw.best" || fail "rofs: best differs from the writable copy"
    [ ! -e "$work/fs3/ro.db-shm" ] || fail "rofs: a -shm file appeared"
    echo "rofs: status, trials, best, profiles, logs, export on a read-only mount"
  else
    skipped+=(rofs)
  fi
fi

# ---- grandchild: relish killed while a trial's setsid grandchild lives -----
# The restart must end it (docs/trials.md, "Descendants"): its pipes died
# with the old relish, and it left the trial's process group.
if only grandchild; then
  cat >"$work/gc.yaml" <<'S'
name: gc
objective: {metric: accuracy, mode: max}
search: {algorithm: grid, space: {x: {type: choice, values: [1]}}}
trial:
  command: ["/bin/sh", "-c", 'p="$RELISH_CHECKPOINT_DIR/gc.pid"; if [ -e "$p" ]; then echo "RELISH epoch=1 accuracy=1"; exit 0; fi; setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! >"$p.tmp"; mv "$p.tmp" "$p"; sleep 300']
S
  db="$work/gc.db"
  run_bg gc "$db" "$work/gc1"
  for _ in $(seq 200); do
    ls "$work"/relish-runs/gc.*/trial-0/ckpt/gc.pid >/dev/null 2>&1 && break
    sleep 0.05
  done
  gc=$(cat "$work"/relish-runs/gc.*/trial-0/ckpt/gc.pid) || fail "grandchild: never started"
  kill -9 "$rp"
  wait "$rp" 2>/dev/null || true
fi
# Without a writable cgroup (a bare Debian tried in a container) relish
# tracks descendants through /proc and says so; a killed relish's tracking
# dies with it, so the restart cannot find the detached grandchild: the
# limit docs/trials.md states, not a failure.
if only grandchild && grep -q "trials' descendants: /proc tracking" "$work/gc1.err"; then
  kill -9 "$gc" 2>/dev/null || true
  skipped+=(grandchild)
  echo "SKIP: test_faults' grandchild case: no writable cgroup here ($(grep -o '/proc tracking.*' "$work/gc1.err" | cut -c1-100))"
elif only grandchild; then
  [ -e "/proc/$gc" ] || fail "grandchild: $gc died with relish already (nothing to test)"
  rc=0
  "$RELISH" run "$work/gc.yaml" --db "$db" --devices "$work/devices.yaml" --quiet \
    >"$work/gc2.out" 2>"$work/gc2.err" || rc=$?
  [ "$rc" = 0 ] || fail "grandchild: restart exited $rc: $(cat "$work/gc2.err")"
  state=gone
  for _ in $(seq 50); do
    state=$(awk '{print $3}' "/proc/$gc/stat" 2>/dev/null || echo gone)
    [ "$state" = gone ] || [ "$state" = Z ] && break
    sleep 0.05
  done
  [ "$state" = gone ] || [ "$state" = Z ] || fail "grandchild: setsid grandchild $gc of the killed run is alive ($state)"
  check_no_orphans grandchild "$db"
  echo "grandchild: the killed run's setsid grandchild ended with the restart"
fi

# ---- lastline: a metric line without its newline ---------------------------
if only lastline; then
  cat >"$work/lastline.yaml" <<S
name: lastline
objective: {metric: accuracy, mode: max}
search: {algorithm: random, seed: 1, max_trials: 1, max_concurrent: 1,
         space: {x: {type: uniform, low: 0.0, high: 1.0}}}
schedule: {algorithm: none, resource: epoch, max: 1}
trial:
  command: ["printf", "RELISH epoch=1 accuracy=0.625"]
  resources: {memory: 64MiB, cpus: 0.5}
S
  rc=0
  "$RELISH" run "$work/lastline.yaml" --db "$work/lastline.db" --devices "$work/devices.yaml" --quiet \
    >"$work/lastline.out" 2>"$work/lastline.err" || rc=$?
  [ "$rc" = 0 ] || fail "lastline: exited $rc: $(cat "$work/lastline.err")"
  grep -q "accuracy = 0.625" "$work/lastline.out" || fail "lastline: $(cat "$work/lastline.out")"
  echo "lastline: a last line without newline is read"
fi

if [ ${#skipped[@]} -gt 0 ]; then
  echo "test_faults: SKIPPED (mount not permitted, or no writable cgroup, here): ${skipped[*]}"
fi
echo "test_faults: ok"
