#!/usr/bin/env bash
# test_serve_stop.sh - SIGTERM stops relish serve gracefully: nothing new
# is launched, a running segment that ends within the grace period ends
# as completed, one that does not is stopped when the grace runs out and
# recorded as interrupted (cancelled, "re-run on resume"); the service
# exits 0, its experiments stay running in the store, and the next start
# resumes and finishes them.  A second SIGTERM does not wait for the grace.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/serve-lib.sh"
serve_lib_init serve-stop
printf 'host:\n  memory: 4GiB\n  cpus: 2\n' >"$work/devices.yaml"
db=$work/state/relish.db
q() { sqlite3 -readonly "$db" "$1" 2>/dev/null || echo 0; }

# a short segment (0.9 s) and a long one (6 s); grace 2 s
serve_spec "$work/short.yaml" stop-short 2 3 300 1
serve_spec "$work/long.yaml" stop-long 2 3 2000 1
printf 'grace: 2s\n' >"$work/config.yaml"
serve_start --devices "$work/devices.yaml" --config "$work/config.yaml"
export RELISH_SERVER="unix:$sock"
"$R" submit "$work/short.yaml" "$work/long.yaml" >/dev/null || fail "submit"
wait_for 30 sh -c "[ \"\$(sqlite3 -readonly '$db' \"SELECT count(*) FROM segments WHERE status='running' AND pid > 0\")\" = 2 ]"
t0=$SECONDS
kill -TERM "$spid"
serve_wait_exit 60 "after SIGTERM (grace 2 s)"
dt=$((SECONDS - t0))
[ "$dt" -le 5 ] || fail "the stop took ${dt}s with a 2 s grace"
grep -q 'event=serve.stopping signal=Terminated grace_s=2' "$work/serve.log" || fail "no stopping line"
grep -q 'grace period over: stopping 1 running segments' "$work/serve.log" || fail "the grace did not run out on the long segment: $(grep -c event=driver "$work/serve.log")"
# the short segment ended as completed during the grace, the long one was interrupted
[ "$(q "SELECT count(*) FROM segments g JOIN trials t ON t.id=g.trial_id JOIN experiments e ON e.id=t.experiment_id WHERE e.name='stop-short' AND g.status='completed'")" -ge 1 ] \
  || fail "the short segment did not complete within the grace"
[ "$(q "SELECT count(*) FROM segments WHERE status='cancelled' AND message LIKE 'interrupted%'")" = 1 ] \
  || fail "the long segment was not recorded as interrupted: $(q "SELECT group_concat(status || ':' || COALESCE(message,''), ' | ') FROM segments")"
[ "$(q "SELECT count(*) FROM segments WHERE status IN ('running','planned')")" = 0 ] || fail "segments left running"
# nothing new was launched after the signal: one segment per experiment so far
[ "$(q "SELECT count(*) FROM segments")" = 2 ] || fail "segments launched after SIGTERM: $(q "SELECT count(*) FROM segments")"
[ "$(q "SELECT count(*) FROM experiments WHERE status='running'")" = 2 ] || fail "experiments not left running"
pgrep -f "$CTRIAL" >/dev/null && fail "a trial outlived the stop"

# the next start resumes and finishes both
serve_start --devices "$work/devices.yaml" --config "$work/config.yaml"
wait_for 120 sh -c "[ \"\$(sqlite3 -readonly '$db' \"SELECT count(*) FROM experiments WHERE status='done'\")\" = 2 ]"
# a second SIGTERM stops without waiting for the grace
printf 'grace: 60s\n' >"$work/config.yaml"
serve_spec "$work/slow.yaml" stop-slow 1 3 5000 1
kill -HUP "$spid"
wait_for 10 grep -q 'event=serve.reloaded' "$work/serve.log"
"$R" submit "$work/slow.yaml" >/dev/null || fail "submit slow"
wait_for 30 sh -c "[ \"\$(sqlite3 -readonly '$db' \"SELECT count(*) FROM segments WHERE status='running' AND pid > 0\")\" = 1 ]"
t0=$SECONDS
kill -TERM "$spid"
# the second once the first has been taken (an event, not a moment: two
# signals pending at once are one for the kernel)
wait_for 30 grep -q 'event=serve.stopping' "$work/serve.log"
kill -TERM "$spid"
serve_wait_exit 60 "after two SIGTERMs"
[ $((SECONDS - t0)) -le 5 ] || fail "a second SIGTERM waited for the grace"

# SIGHUP and SIGTERM while the service starts (its config is a FIFO: once
# the test's open for writing returns, the service is reading it, after it
# watches for signals and before its loop runs): answered as later ones,
# a reload and a graceful stop, exit 0.  They were the signals' default
# actions: exit 129 or 143 mid-start (issue 30, item 12).
mkfifo "$work/early.yaml"
"$R" serve --state "$work/state-early" --listen "unix:$work/early.sock" \
  --devices "$work/devices.yaml" --config "$work/early.yaml" >"$work/early.log" 2>&1 &
epid=$!
exec 3>"$work/early.yaml"
kill -HUP "$epid"
kill -TERM "$epid"
# the reload reads the config again: a plain file by then
rm "$work/early.yaml"
printf 'grace: 3s\n' >"$work/early.yaml"
# (in a subshell: were the service dead, the write's SIGPIPE ends it alone)
(printf 'grace: 2s\n' >&3) 2>/dev/null || true
exec 3>&-
for _ in $(seq 1200); do kill -0 "$epid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$epid" 2>/dev/null && { kill -9 "$epid"; fail "SIGTERM while starting: still running after 60 s"; }
rc=0; wait "$epid" || rc=$?
[ "$rc" = 0 ] || fail "SIGTERM while starting: exit $rc (143 or 129: a signal's default action): $(tail -5 "$work/early.log")"
grep -q 'event=serve.stopping signal=Terminated' "$work/early.log" || fail "no stopping line: $(cat "$work/early.log")"
grep -q 'event=serve.reloaded' "$work/early.log" || fail "the early SIGHUP was not a reload: $(cat "$work/early.log")"
grep -q 'event=serve.stopped rc=0' "$work/early.log" || fail "no stopped line: $(tail -3 "$work/early.log")"
echo "test_serve_stop: SIGHUP and SIGTERM while starting: a reload, then a graceful stop, exit 0"
echo "test_serve_stop: ok"
