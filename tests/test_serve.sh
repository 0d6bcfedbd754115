#!/usr/bin/env bash
# test_serve.sh - relish serve end to end on a temporary state folder, a
# real unix socket and loopback HTTP: submit a C-trial experiment with the
# CLI and follow it to the end; read it back through the CLI and curl;
# bad input is refused clearly: a malformed spec (400 with the very
# FILE:LINE:COL message of `relish validate`), an oversized body (413), an
# unknown route (404), a wrong method (405), a missing or wrong token over
# TCP (401), a non-loopback listen address without tokens (refused at
# start), a second service on the same state (refused), a client with no
# server (one line, exit 7), `relish run` beside a service (refused,
# suggests submit).  SIGTERM stops the service cleanly.
set -euo pipefail
: "${RELISH:?path of the relish binary}" "${RELISH_BUILD:?build directory}"
work=$(mktemp -d /tmp/relish-test-serve-XXXXXX)
chmod 755 "$work"
spid=
cleanup() {
  [ -n "$spid" ] && kill -9 "$spid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$work/serve.log" ] && tail -20 "$work/serve.log" >&2; exit 1; }
unset RELISH_DEVICES RELISH_SERVER RELISH_TOKEN RELISH_TOKEN_FILE CUDA_MPS_PIPE_DIRECTORY
printf 'host:\n  memory: 2GiB\n  cpus: 2\n' >"$work/devices.yaml"
sock="$work/state/relish.sock"

cat >"$work/ok.yaml" <<S
name: serve-ok
objective: {metric: accuracy, mode: max}
search: {algorithm: random, seed: 3, max_trials: 4, max_concurrent: 2,
         space: {x: {type: uniform, low: 0.0, high: 1.0}, y: {type: uniform, low: -5.0, high: 5.0}}}
schedule: {algorithm: asha, resource: epoch, min: 1, max: 9, reduction_factor: 3}
trial:
  command: ["$RELISH_BUILD/ctrial", "--x", "{x}", "--y", "{y}", "--sleep-ms", "5"]
  resources: {memory: 64MiB, cpus: 0.5}
S
cat >"$work/bad.yaml" <<'S'
name: serve-bad
objective: {metric: accuracy, mode: max}
search:
  space:
    lr: {type: uniform, low: abc, high: 1}
trial: {command: [/bin/true]}
S

wait_up() { # socket: up when /server answers
  for _ in $(seq 200); do
    curl -sf --unix-socket "$1" http://relish/api/v1/server >/dev/null 2>&1 && return 0
    kill -0 "$spid" 2>/dev/null || fail "relish serve exited: $(cat "$work/serve.log")"
    sleep 0.05
  done
  fail "relish serve did not answer on $1"
}

# ---- a client with no server: one clear line, exit 7 ----
set +e
out=$(RELISH_SERVER="unix:$work/none.sock" "$RELISH" submit "$work/ok.yaml" 2>&1); rc=$?
set -e
[ "$rc" = 7 ] || fail "submit without a server: exit $rc, want 7: $out"
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "submit without a server: more than one line: $out"
printf '%s' "$out" | grep -q "no relish server at unix:$work/none.sock (RELISH_SERVER).*relish serve" \
  || fail "submit without a server says: $out"

# ---- non-loopback without tokens: refused at start ----
set +e
out=$("$RELISH" serve --state "$work/s2" --listen 0.0.0.0:0 --devices "$work/devices.yaml" 2>&1); rc=$?
set -e
[ "$rc" = 2 ] || fail "non-loopback listen without tokens: exit $rc, want 2: $out"
printf '%s' "$out" | grep -q "not a loopback address.*token file" || fail "non-loopback refusal says: $out"

# ---- start ----
"$RELISH" serve --state "$work/state" --listen "unix:$sock" --listen 127.0.0.1:0 \
  --devices "$work/devices.yaml" >"$work/serve.log" 2>&1 &
spid=$!
wait_up "$sock"
port=$(sed -n 's/.*event=serve.listening addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.log" | head -1)
[ -n "$port" ] || fail "no TCP port in the log"
export RELISH_SERVER="unix:$sock"

# a second service on the same state is refused, naming the first
set +e
out=$("$RELISH" serve --state "$work/state" --listen "unix:$work/other.sock" 2>&1); rc=$?
set -e
[ "$rc" = 1 ] || fail "second service: exit $rc: $out"
printf '%s' "$out" | grep -q "another relish serve (pid $spid) runs on" || fail "second service says: $out"

# relish run beside a service: refused, suggests relish submit
set +e
out=$("$RELISH" run "$work/ok.yaml" --db "$work/run.db" --devices "$work/devices.yaml" 2>&1); rc=$?
set -e
[ "$rc" != 0 ] || fail "relish run beside a service ran"
printf '%s' "$out" | grep -q "relish submit" || fail "relish run beside a service says: $out"
[ ! -e "$work/run.db" ] || fail "relish run beside a service created its database"

# ---- submit and follow ----
"$RELISH" submit "$work/ok.yaml" --follow >"$work/follow.out" 2>&1 || fail "submit --follow: $(cat "$work/follow.out")"
grep -q '^1 serve-ok$' "$work/follow.out" || fail "submit printed: $(cat "$work/follow.out")"
grep -q '^serve-ok: done$' "$work/follow.out" || fail "follow did not see the end: $(cat "$work/follow.out")"
grep -q '^serve-ok: trial [0-9]* (index [0-9]*, completed): accuracy = ' "$work/follow.out" \
  || fail "follow printed no best: $(cat "$work/follow.out")"
grep -q 'event=http method=POST path=/api/v1/experiments status=201' "$work/serve.log" \
  || fail "the submission is not in the log"

# the same name again: 409
set +e
out=$("$RELISH" submit "$work/ok.yaml" 2>&1); rc=$?
set -e
[ "$rc" = 1 ] || fail "resubmitting a name: exit $rc: $out"
printf '%s' "$out" | grep -q "you have an experiment named .serve-ok. already" || fail "resubmitting says: $out"

# ---- reads through the API: curl and the CLI agree with the store ----
api() { curl -s --unix-socket "$sock" "http://relish$1"; }
code() { curl -s -o "$work/body" -w '%{http_code}' "$@"; }
api /api/v1/experiments/serve-ok | grep -q '"status":"done"' || fail "experiment not done: $(api /api/v1/experiments/serve-ok)"
ntrials=$(api /api/v1/experiments/1/trials | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["trials"]))')
[ "$ntrials" = 4 ] || fail "API lists $ntrials trials, want 4"
api /api/v1/whoami | grep -q "\"uid\":$(id -u)" || fail "whoami: $(api /api/v1/whoami)"
# incremental: nothing changed after the cursor but the last trial(s)
cur=$(api /api/v1/experiments/1/trials | python3 -c 'import json,sys; print(json.load(sys.stdin)["cursor"])')
n=$(api "/api/v1/experiments/1/trials?after=$cur" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["trials"]))')
[ "$n" -ge 1 ] && [ "$n" -lt 4 ] || fail "?after=cursor gave $n trials"
seg=$(api /api/v1/experiments/1/segments | python3 -c 'import json,sys; print(json.load(sys.stdin)["segments"][0]["segment_id"])')
c=$(code --unix-socket "$sock" "http://relish/api/v1/segments/$seg/log?tail=200")
[ "$c" = 200 ] && grep -q 'RELISH epoch=' "$work/body" || fail "segment log: $c $(cat "$work/body")"

# ---- the read commands through the API print what they print from the file ----
tid=$(api /api/v1/experiments/1/trials | python3 -c 'import json,sys; print(json.load(sys.stdin)["trials"][0]["id"])')
n=0
while IFS= read -r cmd; do
  n=$((n + 1))
  # shellcheck disable=SC2086
  "$RELISH" $cmd >"$work/remote.$n" 2>&1 || fail "relish $cmd (RELISH_SERVER): $(cat "$work/remote.$n")"
  # shellcheck disable=SC2086
  "$RELISH" $cmd --server "unix:$sock" >"$work/remote2.$n" 2>&1 || fail "relish $cmd --server"
  # shellcheck disable=SC2086
  RELISH_SERVER= "$RELISH" $cmd --db "$work/state/relish.db" >"$work/local.$n" 2>&1 || fail "relish $cmd --db: $(cat "$work/local.$n")"
  cmp -s "$work/remote.$n" "$work/local.$n" || fail "relish $cmd: the service's answer differs from the file's: $(diff "$work/remote.$n" "$work/local.$n" | head -5)"
  cmp -s "$work/remote2.$n" "$work/local.$n" || fail "relish $cmd --server differs"
  [ -s "$work/local.$n" ] || fail "relish $cmd printed nothing"
done <<C
status
status --json
trials --experiment serve-ok --wide
trials --json
best --json
best
logs $tid
export --format csv --what trials
export --format json --what metrics
export --format csv --what segments
C
grep -q 'serve-ok' "$work/local.1" || fail "status: $(cat "$work/local.1")"
# a read command sent to no service: one line, exit 7
set +e
out=$("$RELISH" status --server "unix:$work/none.sock" 2>&1); rc=$?
set -e
[ "$rc" = 7 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "status without a service: $rc $out"

# ---- bad input ----
# malformed spec: 400 with exactly what relish validate says
set +e
val=$(cd "$work" && "$RELISH" validate bad.yaml 2>&1)
out=$(cd "$work" && "$RELISH" submit bad.yaml 2>&1); rc=$?
set -e
[ "$rc" = 2 ] || fail "bad spec: exit $rc: $out"
vmsg=${val#relish validate: }
smsg=${out#relish submit: }
[ "$vmsg" = "$smsg" ] || fail "submit says '$smsg', validate says '$vmsg'"
printf '%s' "$smsg" | grep -q '^bad.yaml:5:[0-9]*: search.space.lr.low' || fail "bad spec message: $smsg"
python3 - "$work/bad.yaml" >"$work/bad.json" <<'P'
import json, sys
print(json.dumps({"spec": open(sys.argv[1]).read(), "name": "bad.yaml", "dir": "/tmp"}))
P
c=$(code --unix-socket "$sock" -X POST -H 'Content-Type: application/json' --data-binary @"$work/bad.json" http://relish/api/v1/experiments)
[ "$c" = 400 ] || fail "bad spec over HTTP: $c"
python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["error"]; assert e["code"]=="RL_ESPEC" and e["status"]==400 and e["message"].startswith("bad.yaml:5:"), e' "$work/body" \
  || fail "bad spec error document: $(cat "$work/body")"
# a body that is not JSON
c=$(code --unix-socket "$sock" -X POST --data-binary 'name: x' http://relish/api/v1/experiments)
[ "$c" = 400 ] && grep -q RL_EPARSE "$work/body" || fail "non-JSON body: $c $(cat "$work/body")"
# oversized body: 413, before and while reading it
head -c 1200000 /dev/zero | tr '\0' 'a' >"$work/big"
c=$(code --unix-socket "$sock" -X POST -H 'Content-Type: application/json' --data-binary @"$work/big" http://relish/api/v1/experiments)
[ "$c" = 413 ] && grep -q RL_ETOOBIG "$work/body" || fail "oversized body: $c $(cat "$work/body")"
c=$(code --unix-socket "$sock" -X POST -H 'Transfer-Encoding: chunked' --data-binary @"$work/big" http://relish/api/v1/experiments)
[ "$c" = 413 ] || fail "oversized chunked body: $c"
c=$(code --unix-socket "$sock" -X POST --data-binary 'x' http://relish/api/v1/experiments/1/cancel?x=1 -H 'Content-Length: 99999')
[ "$c" = 413 ] || fail "body over a small route's limit: $c"
# unknown route, wrong method, missing things
c=$(code --unix-socket "$sock" http://relish/api/v1/nothing)
[ "$c" = 404 ] && grep -q RL_ENOTFOUND "$work/body" || fail "unknown route: $c $(cat "$work/body")"
c=$(code --unix-socket "$sock" http://relish/api/v1/experiments/1/cancel)
[ "$c" = 405 ] && grep -q RL_EMETHOD "$work/body" || fail "wrong method: $c"
c=$(code --unix-socket "$sock" http://relish/api/v1/experiments/999)
[ "$c" = 404 ] || fail "missing experiment: $c"
c=$(code --unix-socket "$sock" "http://relish/api/v1/experiments/1/trials?after=soon")
[ "$c" = 400 ] || fail "bad query value: $c"
# oversized headers: refused by the server, which goes on
c=$(code --unix-socket "$sock" -H "X-Big: $(head -c 20000 /dev/zero | tr '\0' b)" http://relish/api/v1/server)
[ "$c" -ge 400 ] || fail "oversized headers: $c"
api /api/v1/server | grep -q '"version"' || fail "server gone after bad input"

# ---- TCP: anonymous without a token file may read, never submit ----
c=$(code "http://127.0.0.1:$port/api/v1/experiments")
[ "$c" = 200 ] || fail "anonymous read over TCP: $c"
c=$(code -X POST -H 'Content-Type: application/json' --data-binary @"$work/bad.json" "http://127.0.0.1:$port/api/v1/experiments")
[ "$c" = 401 ] && grep -q RL_EAUTH "$work/body" || fail "anonymous submit over TCP: $c $(cat "$work/body")"

# ---- SIGTERM: a clean stop ----
kill -TERM "$spid"
for _ in $(seq 100); do kill -0 "$spid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$spid" 2>/dev/null && fail "still running after SIGTERM"
wait "$spid" || fail "relish serve exited $? after SIGTERM"
spid=
grep -q 'event=serve.stopped rc=0' "$work/serve.log" || fail "no clean stop in the log"
[ ! -e "$sock" ] || fail "the socket was left behind"

# ---- a config's mistakes, all at once (issue 30, item 11: only the first) ----
printf 'policy: relsh\ngrace: soon\nmemory_margin: 20\npolcy: pack\nslurm:\n  poll_interval: 1ms\n  relish_path: bin/relish\n' >"$work/bad.yaml"
set +e
out=$("$RELISH" serve --state "$work/bad-state" --listen "unix:$work/bad.sock" --config "$work/bad.yaml" 2>&1); rc=$?
set -e
[ "$rc" = 2 ] || fail "a config with 6 mistakes: exit $rc, want 2: $out"
for want in "6 errors in $work/bad.yaml:" "$work/bad.yaml:4:1: polcy: unknown key" "$work/bad.yaml:1:9: policy: " \
            "$work/bad.yaml:2:8: grace: " "$work/bad.yaml:3:16: memory_margin: expected a fraction between 0 and 10, got 20" \
            "$work/bad.yaml:6:18: slurm.poll_interval: " "$work/bad.yaml:7:16: slurm.relish_path: expected the absolute path"; do
  printf '%s' "$out" | grep -qF -- "$want" || fail "the config's errors lack '$want': $out"
done
[ ! -e "$work/bad-state" ] || [ -z "$(ls -A "$work/bad-state")" ] || fail "a refused config left a state folder: $(ls "$work/bad-state")"

# ---- tokens over TCP ----
tok=relish-test-token-$RANDOM$RANDOM$RANDOM
printf '# tokens\n%s %s\n' "$tok" "$(id -un)" >"$work/tokens"
chmod 644 "$work/tokens"
printf 'tokens: %s\n' "$work/tokens" >"$work/config.yaml"
set +e
out=$("$RELISH" serve --state "$work/state" --listen 127.0.0.1:0 --config "$work/config.yaml" 2>&1); rc=$?
set -e
[ "$rc" != 0 ] && printf '%s' "$out" | grep -q "mode 0644: others may read it" || fail "token file others may read: $rc $out"
chmod 600 "$work/tokens"
"$RELISH" serve --state "$work/state" --listen "unix:$sock" --listen 127.0.0.1:0 \
  --config "$work/config.yaml" --devices "$work/devices.yaml" >"$work/serve.log" 2>&1 &
spid=$!
wait_up "$sock"
port=$(sed -n 's/.*event=serve.listening addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.log" | head -1)
c=$(code "http://127.0.0.1:$port/api/v1/experiments")
[ "$c" = 401 ] && grep -q 'needs a token' "$work/body" || fail "missing token: $c $(cat "$work/body")"
c=$(code -H "Authorization: Bearer wrong-token-0123456789" "http://127.0.0.1:$port/api/v1/experiments")
[ "$c" = 401 ] || fail "wrong token: $c"
c=$(code -H "Authorization: Bearer $tok" "http://127.0.0.1:$port/api/v1/experiments")
[ "$c" = 200 ] && grep -q serve-ok "$work/body" || fail "token read: $c"
RELISH_TOKEN=$tok "$RELISH" status --server "127.0.0.1:$port" --json >"$work/status.json" 2>&1 \
  || fail "status over TCP with a token: $(cat "$work/status.json")"
grep -q '"serve-ok"' "$work/status.json" || fail "status over TCP: $(cat "$work/status.json")"
set +e
out=$("$RELISH" status --server "127.0.0.1:$port" 2>&1); rc=$?
set -e
[ "$rc" = 6 ] && printf '%s' "$out" | grep -q "needs a token" || fail "status over TCP without a token: $rc $out"
# with tokens, Host names are the admin's business (a page has no token)
c=$(code -H "Host: relish.example" -H "Authorization: Bearer $tok" "http://127.0.0.1:$port/api/v1/experiments")
[ "$c" = 200 ] || fail "Host: relish.example with a token: $c"
# a token file rewritten to revoke a token, with one bad line: fails closed
# (before, the old tokens stayed, the revoked one with them)
printf '%s %s\nthis-line-is-bad\n' "relish-other-token-$RANDOM$RANDOM" "$(id -un)" >"$work/tokens"
n=$(grep -c 'event=serve.reloaded' "$work/serve.log" || true)
kill -HUP "$spid"
wait_for_log() { [ "$(grep -c 'event=serve.reloaded' "$work/serve.log")" -gt "$n" ]; }
for _ in $(seq 200); do wait_for_log && break; sleep 0.05; done
wait_for_log || fail "no reload after SIGHUP"
grep 'event=serve.reloaded' "$work/serve.log" | tail -1 | grep -q 'tokens=none-taken' ||
  fail "the reload line does not say no token is taken: $(grep 'event=serve.reload' "$work/serve.log" | tail -2)"
c=$(code -H "Authorization: Bearer $tok" "http://127.0.0.1:$port/api/v1/experiments")
[ "$c" = 401 ] || fail "the revoked token still reads after a bad token file: $c"
c=$(code "http://127.0.0.1:$port/api/v1/experiments")
[ "$c" = 401 ] || fail "a bad token file made TCP anonymous: $c"
printf '%s %s\n' "$tok" "$(id -un)" >"$work/tokens"
# the same reload shortens max_segment_time (24 h at start): a trial that
# never ends, launched after it, is stopped as a timeout (before, the
# limit changed only at the next start, and it ran on)
printf 'tokens: %s\nmax_segment_time: 2s\n' "$work/tokens" >"$work/config.yaml"
kill -HUP "$spid"
for _ in $(seq 200); do c=$(code -H "Authorization: Bearer $tok" "http://127.0.0.1:$port/api/v1/experiments"); [ "$c" = 200 ] && break; sleep 0.05; done
[ "$c" = 200 ] || fail "the token file, right again, was not taken: $c"
cat >"$work/forever.yaml" <<S
name: serve-forever
objective: {metric: accuracy, mode: max}
search: {algorithm: random, seed: 1, max_trials: 1, max_concurrent: 1,
         space: {x: {type: uniform, low: 0.0, high: 1.0}}}
trial:
  command: ["/bin/sleep", "600"]
  resources: {memory: 64MiB, cpus: 0.1}
  retries: 0
S
timeout 60 "$RELISH" submit "$work/forever.yaml" --server "unix:$sock" --follow >"$work/forever.out" 2>&1 || true
curl -s --unix-socket "$sock" "http://relish/api/v1/experiments/serve-forever/segments" >"$work/forever.json"
grep -q '"status":"timeout"' "$work/forever.json" \
  || fail "max_segment_time from a reload not applied: $(cat "$work/forever.json") $(tail -3 "$work/forever.out")"
kill -TERM "$spid"
wait "$spid" || fail "second service exited $?"
spid=
echo "test_serve: ok"
