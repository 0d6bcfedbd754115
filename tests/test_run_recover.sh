#!/usr/bin/env bash
# test_run_recover.sh - `relish run` killed with SIGKILL and started again
# with the same command resumes: finished segments and their results are
# unchanged, interrupted segments are marked lost and re-run from the last
# boundary (resource_from > 0 where one had passed), the processes of the
# killed run are gone (identified by the pid + start time the store kept),
# and the experiment finishes.  Three kill points: after 1 s, right after
# the first segment completes, and in the middle of a slow later segment.
set -euo pipefail
: "${RELISH:?path of the relish binary}" "${RELISH_BUILD:?build directory}"
PY=/usr/bin/python3
work=$(mktemp -d /tmp/relish-test-recover-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset RELISH_DEVICES CUDA_MPS_PIPE_DIRECTORY
printf 'host:\n  memory: 1GiB\n  cpus: 2\n' >"$work/devices.yaml"

spec() { # NAME SLEEP_MS
cat >"$work/$1.yaml" <<S
name: $1
objective: {metric: accuracy, mode: max}
search: {algorithm: random, seed: 11, max_trials: 6, max_concurrent: 2,
         space: {x: {type: uniform, low: 0.0, high: 1.0}, y: {type: uniform, low: -5.0, high: 5.0}}}
schedule: {algorithm: asha, resource: epoch, min: 1, max: 9, reduction_factor: 3}
trial:
  command: ["$RELISH_BUILD/ctrial", "--x", "{x}", "--y", "{y}", "--sleep-ms", "$2"]
  resources: {memory: 64MiB, cpus: 0.5}
sharing: {policy: pack}
S
}

q() { "$PY" -c 'import sqlite3,sys; r=sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone(); print(r[0] if r and r[0] is not None else 0)' "$@"; }

# Start relish in the background; wait until SQL condition holds (or 20 s).
start_and_kill() { # NAME CONDITION
  local db="$work/$1.db"
  "$RELISH" run "$work/$1.yaml" --db "$db" --devices "$work/devices.yaml" --quiet \
    >"$work/$1.out1" 2>&1 &
  local rp=$!
  pids+=("$rp")
  for _ in $(seq 200); do
    if [ -f "$db" ] && [ "$(q "$db" "$2" 2>/dev/null || echo 0)" != 0 ]; then break; fi
    kill -0 "$rp" 2>/dev/null || fail "$1: relish ended before the kill point"
    sleep 0.1
  done
  kill -9 "$rp"
  wait "$rp" 2>/dev/null || true
}

snapshot() { # DB -> completed segments and their metrics, as text
  "$PY" - "$1" <<'P'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for r in db.execute("SELECT s.id, s.trial_id, s.seq, s.resource_from, s.resource_to, s.status, "
                    "(SELECT group_concat(m.name || '=' || m.value || '@' || m.resource) FROM metrics m "
                    " WHERE m.segment_id = s.id) FROM segments s WHERE s.status = 'completed' ORDER BY s.id"):
    print(r)
P
}

check_resumed() { # NAME
  local db="$work/$1.db"
  snapshot "$db" >"$work/$1.before"
  local ntrials; ntrials=$(q "$db" "SELECT count(*) FROM trials")
  "$PY" -c 'import sqlite3,sys
for p,s in sqlite3.connect(sys.argv[1]).execute("SELECT pid, pid_start_time FROM segments WHERE status=\x27running\x27 AND pid > 0"): print(p, s)' "$db" >"$work/$1.running"
  [ -s "$work/$1.running" ] || [ "$2" = any ] || fail "$1: nothing was running at the kill"
  "$RELISH" run "$work/$1.yaml" --db "$db" --devices "$work/devices.yaml" \
    >"$work/$1.out2" 2>"$work/$1.err2" &
  local rp=$!
  pids+=("$rp")
  # As soon as the restarted relish has resumed (before the old processes
  # could have finished on their own), none of them may be alive.
  for _ in $(seq 100); do
    [ "$(q "$db" "SELECT count(*) FROM events WHERE kind='experiment.resumed'")" != 0 ] && break
    sleep 0.05
  done
  while read -r pid st; do
    if [ -r "/proc/$pid/stat" ]; then
      # A zombie waiting for its new parent to reap it is dead.
      read -r now state < <(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | awk '{print $20, $1}') || true
      [ "${now:-0}" != "$st" ] || [ "$state" = Z ] || fail "$1: orphan process $pid ($state) of the killed run is alive"
    fi
  done <"$work/$1.running"
  wait "$rp" || fail "$1: restart exited $?: $(cat "$work/$1.err2")"
  grep -q "^$1: trial [0-9]* (index [0-9]*, completed): accuracy = " "$work/$1.out2" \
    || fail "$1: no best after restart: $(cat "$work/$1.out2")"
  grep -q "resumed: $ntrials trials restored" "$work/$1.err2" || fail "$1: $(cat "$work/$1.err2")"
  # Finished work from before the kill is there, unchanged.
  snapshot "$db" >"$work/$1.after"
  while IFS= read -r line; do
    grep -qxF "$line" "$work/$1.after" || fail "$1: completed segment changed or lost: $line"
  done <"$work/$1.before"
  "$PY" - "$db" "$1" <<'P'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); name = sys.argv[2]
def check(c, w):
    if not c: sys.exit("FAIL: %s: %s" % (name, w))
st = dict(db.execute("SELECT status, count(*) FROM trials GROUP BY status").fetchall())
check(sum(st.values()) == 6 and set(st) <= {"completed", "stopped"}, "trials %s" % st)
check(db.execute("SELECT status FROM experiments").fetchone()[0] == "done", "experiment not done")
check(db.execute("SELECT count(*) FROM segments WHERE status IN ('running','planned')").fetchone()[0] == 0,
      "segments left running")
# Each lost segment is followed by a re-run of the same trial from the
# same point: its last boundary, where the checkpoint is.
for tid, seq, a, b in db.execute("SELECT trial_id, seq, resource_from, resource_to FROM segments "
                                 "WHERE status='lost'").fetchall():
    nxt = db.execute("SELECT resource_from, resource_to, status FROM segments WHERE trial_id=? AND seq=?",
                     (tid, seq + 1)).fetchone()
    check(nxt is not None, "lost segment of trial %d not re-run" % tid)
    check(nxt[0] == a, "re-run of trial %d starts at %s, lost one at %s" % (tid, nxt[0], a))
# ASHA order survives the restart: continuations start at the previous end.
prev = {}
for t, a, b, s in db.execute("SELECT trial_id, resource_from, resource_to, status FROM segments ORDER BY trial_id, seq"):
    check(a == prev.get(t, 0), "trial %d segment starts at %s, expected %s" % (t, a, prev.get(t, 0)))
    if s == "completed":
        prev[t] = b
print(db.execute("SELECT count(*) FROM segments WHERE status='lost'").fetchone()[0],
      db.execute("SELECT max(resource_from) FROM segments WHERE status='lost'").fetchone()[0])
P
}

# 1. After about a second.
spec k1 100
start_and_kill k1 "SELECT (julianday('now') - 2440587.5) * 86400 - min(created_at) > 1.0 FROM trials"
check_resumed k1 any >"$work/k1.lost"

# 2. Right after the first segment completes.
spec k2 100
start_and_kill k2 "SELECT (SELECT count(*) FROM segments WHERE status='completed') > 0 AND (SELECT count(*) FROM segments WHERE status='running' AND pid > 0) > 0"
check_resumed k2 running >"$work/k2.lost"

# 3. In the middle of a slow continuation segment (3 -> 9, 6 epochs of
#    250 ms): it must be re-run from 3, its checkpoint.
spec k3 250
start_and_kill k3 "SELECT count(*) FROM segments s JOIN metrics m ON m.segment_id = s.id WHERE s.status='running' AND s.resource_from = 3 AND m.resource >= 5"
check_resumed k3 running >"$work/k3.lost"
read -r n3 from3 <"$work/k3.lost"
[ "$n3" -ge 1 ] || fail "k3: no lost segment"
[ "$from3" = 3.0 ] || [ "$from3" = 3 ] || fail "k3: lost segment started at $from3, expected 3"
echo "test_run_recover: ok (lost segments: $(cat "$work/k1.lost") / $(cat "$work/k2.lost") / $n3 from $from3)"
