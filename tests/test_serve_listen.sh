#!/usr/bin/env bash
# test_serve_listen.sh - a relish serve on a state folder of its own
# (docs/serve.md offers --state anywhere) with only a TCP --listen
# (issue 30 item 5):
#   - it keeps the state folder's unix socket: submit through it works, and
#     the log names both listeners;
#   - `relish run` on the same machine, with no RELISH_SERVER and the
#     default socket absent, is refused (exit 1), naming the service's pid
#     and address and suggesting `relish submit`; it writes nothing;
#   - after the service stops, the same `relish run` runs.
set -euo pipefail
. "$RELISH_SRC/tests/support/serve-lib.sh"
serve_lib_init listen
printf 'host:\n  memory: 1GiB\n  cpus: 2\n' >"$work/devices.yaml"
mkdir -p "$work/elsewhere"
state=$work/elsewhere/state
sock=$state/relish.sock
cat >"$work/exp.yaml" <<S
name: listen-exp
objective: {metric: accuracy, mode: max}
search: {algorithm: random, seed: 1, max_trials: 2, max_concurrent: 2,
         space: {x: {type: uniform, low: 0.0, high: 1.0}, y: {type: uniform, low: -5.0, high: 5.0}}}
schedule: {algorithm: none, resource: epoch, max: 2}
trial:
  command: ["$CTRIAL", "--x", "{x}", "--y", "{y}"]
  resources: {memory: 32MiB, cpus: 0.5}
S

"$R" serve --state "$state" --listen 127.0.0.1:0 --devices "$work/devices.yaml" \
  >>"$work/serve.log" 2>&1 &
spid=$!
up() { curl -sf --max-time 5 --unix-socket "$sock" http://relish/api/v1/server >/dev/null 2>&1; }
wait_for 30 up
grep -q "event=serve.listening addr=unix:$sock" "$work/serve.log" ||
  fail "the log does not name the state folder's socket"
grep -q 'event=serve.listening addr=127\.0\.0\.1:[1-9]' "$work/serve.log" ||
  fail "the log does not name the TCP listener"
RELISH_SERVER="unix:$sock" "$R" submit "$work/exp.yaml" >"$work/submit.out" 2>&1 ||
  fail "submit through the kept socket: $(cat "$work/submit.out")"

unset RELISH_SERVER
[ -e /var/lib/relish/relish.sock ] && echo "note: a default socket exists here too"
rc=0
"$R" run "$work/exp.yaml" --db "$work/run.db" --devices "$work/devices.yaml" >"$work/run.out" 2>"$work/run.err" || rc=$?
[ "$rc" = 1 ] || fail "relish run beside a service on $state: exit $rc, want 1: $(cat "$work/run.err")"
grep -q "a relish service owns this machine's devices (pid $spid, listening on unix:$sock)" "$work/run.err" ||
  fail "the refusal does not name the service: $(cat "$work/run.err")"
grep -q 'relish submit --server' "$work/run.err" || fail "the refusal does not suggest submit: $(cat "$work/run.err")"
[ ! -e "$work/run.db" ] || fail "the refused relish run created its database"
echo "refused: $(cat "$work/run.err")"

serve_stop
"$R" run "$work/exp.yaml" --db "$work/run.db" --devices "$work/devices.yaml" >"$work/run.out" 2>"$work/run.err" ||
  fail "relish run with no service left: $(tail -3 "$work/run.err")"
echo "ok: the socket kept beside --listen HOST:PORT; relish run refused beside a service on any state folder"
