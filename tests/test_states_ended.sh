#!/usr/bin/env bash
# test_states_ended.sh - every trial of an ended experiment has an ended
# state (issue 30 item 4: after a cancel `relish status` still said RUN 1,
# and the dashboard's running column and relish_trials{state="running"}
# agreed).  Three ways an experiment ends unfinished, each with a trial
# running at that moment:
#   1. relish run fails fast (three trials fail the same way while a fourth
#      sleeps): exit 1, the experiment failed, the sleeper cancelled;
#   2. relish run gets SIGINT: exit 130, the experiment and its running
#      trials cancelled; the same command again takes them back (pending,
#      then running) and finishes them;
#   3. relish serve: `relish cancel` of a running experiment: the status
#      (CLI and API), `relish trials` and /metrics show none running.
# Every wait is on a condition (the store, the API), never a fixed sleep.
set -euo pipefail
. "$RELISH_SRC/tests/support/serve-lib.sh"
serve_lib_init states
PY=/usr/bin/python3
printf 'host:\n  memory: 2GiB\n  cpus: 4\n' >"$work/devices.yaml"

counts() { # the status --json trial counts of the one experiment, as k=v words
  "$PY" -c 'import json,sys; t=json.load(sys.stdin)[0]["trials"]; print(" ".join("%s=%s" % kv for kv in sorted(t.items())))'
}
need() { # WHAT COUNTS K=V...: each K=V among the counts, or fail naming WHAT
  local what=$1 c=" $2 " kv
  shift 2
  for kv in "$@"; do
    case "$c" in *" $kv "*) ;; *) fail "$what: want $kv, got:$c" ;; esac
  done
}
running_segments() { # DB: how many segments are running (from the file)
  "$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM segments WHERE status=\x27running\x27 AND pid > 0").fetchone()[0])' "$1" 2>/dev/null || echo 0
}

# ---- 1. fail fast with a trial running ----
cat >"$work/ff.sh" <<'T'
#!/bin/sh
# The first trial sleeps (it is running when the others have failed);
# every other fails at once, the same way.
[ "$RELISH_TRIAL_ID" = t1 ] && exec sleep 120
echo "ValueError: lr must be positive" >&2
exit 1
T
chmod 755 "$work/ff.sh"
cat >"$work/ff.yaml" <<S
name: ff
objective: {metric: accuracy, mode: max}
search: {algorithm: random, seed: 1, max_trials: 8, max_concurrent: 4,
         space: {x: {type: uniform, low: 0.0, high: 1.0}}}
schedule: {algorithm: none, resource: epoch, max: 1}
trial:
  command: ["$work/ff.sh"]
  resources: {memory: 32MiB, cpus: 0.5}
  retries: 0
  fail_fast: 3
S
rc=0
"$R" run "$work/ff.yaml" --db "$work/ff.db" --devices "$work/devices.yaml" >"$work/ff.out" 2>"$work/ff.err" || rc=$?
[ "$rc" = 1 ] || fail "fail fast: relish run exited $rc, want 1: $(tail -3 "$work/ff.err")"
grep -q 'failed the same way' "$work/ff.err" || fail "fail fast did not trip: $(tail -5 "$work/ff.err")"
"$R" status --db "$work/ff.db" --json >"$work/ff.json"
c=$(counts <"$work/ff.json")
echo "fail fast: $c"
need "after fail fast" "$c" running=0 pending=0 paused=0 failed=3
grep -q '"status": *"failed"' "$work/ff.json" || fail "the experiment is not failed: $(cat "$work/ff.json")"
"$R" status --db "$work/ff.db" >"$work/ff.table"
head -1 "$work/ff.table" | grep -q CANCEL || fail "status has no CANCEL column: $(cat "$work/ff.table")"
"$R" trials --db "$work/ff.db" --json | "$PY" -c '
import json, sys
st = {t["id"]: t["status"] for t in json.load(sys.stdin)}
assert st[1] == "cancelled", st
assert all(s in ("failed", "cancelled") for s in st.values()), st' || fail "relish trials after fail fast"

# ---- 2. SIGINT, then the same command resumes ----
cat >"$work/int.yaml" <<S
name: int
objective: {metric: accuracy, mode: max}
search: {algorithm: random, seed: 2, max_trials: 3, max_concurrent: 2,
         space: {x: {type: uniform, low: 0.0, high: 1.0}, y: {type: uniform, low: -5.0, high: 5.0},
                 sleep: 300}}
schedule: {algorithm: none, resource: epoch, max: 4}
trial:
  command: ["$CTRIAL", "--x", "{x}", "--y", "{y}", "--sleep-ms", "{sleep}"]
  resources: {memory: 32MiB, cpus: 0.5}
S
"$R" run "$work/int.yaml" --db "$work/int.db" --devices "$work/devices.yaml" >"$work/int.out" 2>"$work/int.err" &
rp=$!
for _ in $(seq 400); do
  [ "$(running_segments "$work/int.db")" = 2 ] && break
  kill -0 "$rp" 2>/dev/null || fail "relish run ended before two segments ran: $(tail -3 "$work/int.err")"
  sleep 0.05
done
[ "$(running_segments "$work/int.db")" = 2 ] || fail "two segments never ran at once"
kill -INT "$rp"
rc=0; wait "$rp" || rc=$?
[ "$rc" = 130 ] || fail "SIGINT: relish run exited $rc, want 130: $(tail -3 "$work/int.err")"
"$R" status --db "$work/int.db" --json >"$work/int.json"
c=$(counts <"$work/int.json")
echo "after SIGINT: $c"
grep -q '"status": *"cancelled"' "$work/int.json" || fail "the interrupted experiment is not cancelled"
need "after SIGINT" "$c" running=0 pending=0 paused=0
case " $c " in *" cancelled=2 "*|*" cancelled=3 "*) ;; *) fail "after SIGINT, the running trials are not cancelled: $c" ;; esac
# resumed: none of them stays cancelled, and every one finishes
"$R" run "$work/int.yaml" --db "$work/int.db" --devices "$work/devices.yaml" >"$work/int.out2" 2>"$work/int.err2" ||
  fail "the resumed run failed: $(tail -3 "$work/int.err2")"
c=$("$R" status --db "$work/int.db" --json | counts)
echo "resumed: $c"
need "after the resumed run" "$c" cancelled=0 completed=3

# ---- 3. relish serve: cancel a running experiment ----
serve_start --devices "$work/devices.yaml" --listen 127.0.0.1:0
port=$(sed -n 's/.*event=serve.listening addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.log" | head -1)
[ -n "$port" ] || fail "no TCP port in the service's log"
sed -e 's/^name: int/name: served/' -e 's/sleep: 300/sleep: 5000/' "$work/int.yaml" >"$work/served.yaml"
export RELISH_SERVER="unix:$sock"
"$R" submit "$work/served.yaml" >"$work/submit.out" || fail "submit: $(cat "$work/submit.out")"
two_running() { api /api/v1/experiments/served | grep -q '"running": *2'; }
wait_for 60 two_running
"$R" cancel served >"$work/cancel.out" 2>&1 || fail "cancel: $(cat "$work/cancel.out")"
ended() { "$R" status --json | counts | grep -q ' running=0 '; }
wait_for 30 ended
c=$("$R" status --json | counts)
echo "served, cancelled: $c"
need "after cancel" "$c" running=0 pending=0 paused=0
case " $c " in *" cancelled=2 "*|*" cancelled=3 "*) ;; *) fail "after cancel, no trial cancelled: $c" ;; esac
api /api/v1/experiments/served | "$PY" -c '
import json, sys
e = json.load(sys.stdin)
assert e["status"] == "cancelled", e["status"]
assert e["trials"]["running"] == 0 and e["trials"]["cancelled"] >= 2, e["trials"]' || fail "the API after cancel"
curl -sf "http://127.0.0.1:$port/metrics" >"$work/metrics.txt" || fail "GET /metrics"
grep -q '^relish_trials{state="running"} 0$' "$work/metrics.txt" ||
  fail "relish_trials running after cancel: $(grep '^relish_trials' "$work/metrics.txt")"
grep -q '^relish_trials{state="cancelled"} [2-9]' "$work/metrics.txt" ||
  fail "relish_trials cancelled after cancel: $(grep '^relish_trials' "$work/metrics.txt")"
serve_stop
echo "ok: no trial of an ended experiment reads as running (fail fast, SIGINT, cancel)"
