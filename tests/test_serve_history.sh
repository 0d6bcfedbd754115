#!/usr/bin/env bash
# test_serve_history.sh - a service with a long history (issue 27, item 1):
#   - 1,205 ended experiments written through the store (tests/support/
#     mkhistory): GET /api/v1/experiments answers a page (1,000 at most,
#     next_after), ?after= ?limit= page by id, ?status= ?user= ?since=
#     filter, bad values are 400;
#   - relish status through the service follows the pages (every
#     experiment), --state --user --since --limit --after filter and page
#     (a "more:" line names the next page) from the service and from the
#     database alike; bad values are exit 2;
#   - finished experiments leave the driver's memory: /healthz counts the
#     experiments in memory, which goes back to 0 once a wave has ended
#     (it was the number ever run), while their rows stay readable;
#   - /readyz is 200 while the service runs;
#   - --log-file: the log goes there, not to stderr; moved away and SIGHUP,
#     the service opens a new file and writes only there;
#   - relish backup while the wave runs: a whole copy that opens, lists
#     the history and passes quick_check; over an existing file exit 1, of
#     no database exit 3, nothing half-written left; a database from a
#     newer relish is exit 4 for status and backup, and stays unchanged.
set -euo pipefail
. "$RELISH_SRC/tests/support/serve-lib.sh"
serve_lib_init history
serve_users 1
PY=/usr/bin/python3
mkdir -p "$work/state"
"$RELISH_BUILD/mkhistory" "$work/state/relish.db" 1205 >"$work/mk.out" ||
  fail "mkhistory: $(cat "$work/mk.out")"
printf 'host:\n  memory: 2GiB\n  cpus: 4\n' >"$work/devices.yaml"
serve_start --devices "$work/devices.yaml" --log-file "$work/relish.log"
export RELISH_SERVER="unix:$sock"

# field FIELD: read JSON on stdin; len: how many experiments
len() { "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)["experiments"]))'; }
field() { "$PY" -c 'import json,sys; v=json.load(sys.stdin)[sys.argv[1]]; print("null" if v is None else v)' "$1"; }
ids() { "$PY" -c 'import json,sys; print(" ".join(str(e["id"]) for e in json.load(sys.stdin)["experiments"]))'; }

# pages
[ "$(api /api/v1/experiments | len)" = 1000 ] || fail "the first page is not 1000 long"
[ "$(api /api/v1/experiments | field next_after)" = 1000 ] || fail "next_after of the first page"
[ "$(api '/api/v1/experiments?after=1000' | len)" = 205 ] || fail "the second page"
[ "$(api '/api/v1/experiments?after=1000' | field next_after)" = null ] || fail "the end's next_after"
[ "$(api '/api/v1/experiments?limit=3&after=5' | ids)" = "6 7 8" ] || fail "?limit=3&after=5"
[ "$(api '/api/v1/experiments?limit=3&after=5' | field next_after)" = 8 ] || fail "next_after 8"
# filters, alone and together
[ "$(api '/api/v1/experiments?status=cancelled&limit=3' | ids)" = "3 6 9" ] || fail "?status=cancelled"
[ "$(api '/api/v1/experiments?user=bob&limit=3&after=10' | ids)" = "12 14 16" ] || fail "?user=bob"
[ "$(api '/api/v1/experiments?user=alice&status=cancelled&limit=2' | ids)" = "3 9" ] ||
  fail "?user=alice&status=cancelled"
# created a minute apart, the last one a minute ago: 10 within 10.5 minutes
[ "$(api '/api/v1/experiments?since=10m30s' | ids)" = "$(seq -s' ' 1196 1205)" ] || fail "?since=10m30s"
since=$(( $(date +%s) - 630 ))
[ "$(api "/api/v1/experiments?since=$since" | len)" = 10 ] || fail "?since=UNIX"
for bad in 'limit=x' 'after=-1' 'status=sleeping' 'since=yesterday'; do
  code=$(curl -s -o "$work/bad.json" -w '%{http_code}' --unix-socket "$sock" "http://relish/api/v1/experiments?$bad")
  [ "$code" = 400 ] || fail "?$bad: HTTP $code, want 400"
done
grep -q 'since' "$work/bad.json" || fail "the ?since= error does not name it: $(cat "$work/bad.json")"

# relish status: every page through the service, filters from both sources
n=$("$R" status --json | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)))')
[ "$n" = 1205 ] || fail "relish status through the service shows $n of 1205"
for src in "--server unix:$sock" "--db $work/state/relish.db"; do
  # shellcheck disable=SC2086 # two words
  out=$("$R" status $src --state cancelled --user bob --limit 2)
  echo "$out" | grep -q '^h6 ' && echo "$out" | grep -q '^h12 ' || fail "status $src --state --user: $out"
  echo "$out" | grep -q '^more: relish status --after 12' || fail "no more: line ($src): $out"
  # shellcheck disable=SC2086
  out=$("$R" status $src --since 3m30s --json | "$PY" -c 'import json,sys; print(" ".join(e["experiment"] for e in json.load(sys.stdin)))')
  [ "$out" = "h1203 h1204 h1205" ] || fail "status $src --since 3m30s: $out"
  # shellcheck disable=SC2086
  out=$("$R" status $src --after 1203)
  echo "$out" | grep -q '^h1204 ' && ! echo "$out" | grep -q '^h1203 ' || fail "status $src --after 1203: $out"
done
for bad in '--state sleeping' '--since soon' '--limit 0' '--after x' '--user a/b'; do
  rc=0
  # shellcheck disable=SC2086
  "$R" status $bad >"$work/bad.out" 2>&1 || rc=$?
  [ "$rc" = 2 ] || fail "status $bad: exit $rc, want 2: $(cat "$work/bad.out")"
done
rc=0; "$R" status h3 --limit 2 >"$work/bad.out" 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "status NAME --limit: exit $rc, want 2"

# finished experiments leave memory; the store keeps them
[ "$(api /readyz | field ready)" = True ] || fail "/readyz: $(api /readyz)"
[ "$(api /healthz | field experiments_in_memory)" = 0 ] || fail "/healthz before: $(api /healthz)"
for k in 1 2 3 4 5 6; do
  serve_spec "$work/w$k.yaml" "w$k" 2 2 20
  as "$U1" "$R" submit "w$k.yaml" >/dev/null 2>&1 || fail "submit w$k"
done
[ "$(api '/api/v1/experiments?status=running' | len)" -ge 1 ] || fail "nothing runs"
# relish backup while the service writes: a whole, consistent copy
"$R" backup --state "$work/state" "$work/copy.db" >"$work/backup.out" 2>&1 ||
  fail "relish backup: $(cat "$work/backup.out")"
grep -q "^backed up $work/state/relish.db to $work/copy.db: [0-9]* pages, schema version" "$work/backup.out" ||
  fail "relish backup printed: $(cat "$work/backup.out")"
[ "$(sqlite3 "$work/copy.db" 'PRAGMA quick_check')" = ok ] || fail "the copy is damaged"
n=$("$R" status --db "$work/copy.db" --json | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)))')
[ "$n" -ge 1206 ] || fail "the copy holds $n experiments"
rc=0; "$R" backup --state "$work/state" "$work/copy.db" >"$work/backup.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q 'exists already' "$work/backup.out" || fail "backup over a file: exit $rc: $(cat "$work/backup.out")"
rc=0; "$R" backup --db "$work/none.db" "$work/c2.db" >"$work/backup.out" 2>&1 || rc=$?
[ "$rc" = 3 ] || fail "backup of no database: exit $rc, want 3"
ls "$work"/copy.db.part-* >/dev/null 2>&1 && fail "a part file was left"
# a database from a newer relish: refused (exit 4), never changed
cp "$work/copy.db" "$work/newer.db"
sqlite3 "$work/newer.db" 'PRAGMA user_version = 99'
sum=$(sha256sum <"$work/newer.db")
for cmd in "status --db $work/newer.db" "backup --db $work/newer.db $work/c3.db"; do
  rc=0
  # shellcheck disable=SC2086
  "$R" $cmd >"$work/newer.out" 2>&1 || rc=$?
  [ "$rc" = 4 ] && grep -q 'written by a newer relish' "$work/newer.out" ||
    fail "relish $cmd on a newer database: exit $rc: $(cat "$work/newer.out")"
done
[ "$(sha256sum <"$work/newer.db")" = "$sum" ] || fail "the newer database was changed"
wait_for 120 bash -c "[ \"\$(curl -s --unix-socket $sock 'http://relish/api/v1/experiments?status=running&after=1205' | $PY -c 'import json,sys; print(len(json.load(sys.stdin)[\"experiments\"]))')\" = 0 ]"
wait_for 20 bash -c "[ \"\$(curl -s --unix-socket $sock http://relish/healthz | $PY -c 'import json,sys; print(json.load(sys.stdin)[\"experiments_in_memory\"])')\" = 0 ]"
[ "$(api '/api/v1/experiments?after=1205&status=done' | len)" = 6 ] || fail "the wave is not done in the store"
[ "$(as "$U1" "$R" status w6 --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["trials"]["completed"])')" = 2 ] ||
  fail "w6's trials are not readable after it left memory"
api /healthz | "$PY" -c 'import json,sys; h=json.load(sys.stdin); assert h["status"] == "ok" and h["rss_bytes"] > 0, h' ||
  fail "/healthz: $(api /healthz)"
# --log-file: the log is there, and SIGHUP opens it again after a move
grep -q 'event=serve.started' "$work/relish.log" || fail "--log-file has no serve.started: $(head -3 "$work/relish.log")"
[ ! -s "$work/serve.log" ] || ! grep -q 'event=serve.started' "$work/serve.log" || fail "the log still went to stderr"
mv "$work/relish.log" "$work/relish.log.1"
kill -HUP "$spid"
wait_for 20 grep -q 'event=serve.log.*reopened' "$work/relish.log"
grep -q 'event=serve.reload' "$work/relish.log" || fail "the reload's line is not in the new file"
serve_stop
grep -q 'event=serve.stopped' "$work/relish.log" || fail "the stop's line is not in the new file"
grep -q 'event=serve.stopped' "$work/relish.log.1" && fail "the old file got lines after SIGHUP"
echo "test_serve_history: $(cat "$work/mk.out"): pages, filters, relish status and memory ok"
