#!/usr/bin/env bash
# test_serve_retention.sh - the config's retention: (issue 27, item 3) on a
# real relish serve over 30 ended experiments of two owners (tests/support/
# mkhistory: a minute apart, each ended 30 s after it began, the last a
# minute ago) and one that runs:
#   - an archive that cannot be written: nothing is removed, each failure
#     logged ("it stays");
#   - after SIGHUP with {age: 20m, keep: 4, archive}: each owner keeps its
#     4 latest ended experiments, the others are exported to
#     ARCHIVE/OWNER/ID-NAME.json (relish export's trial objects, both
#     trials, read back here), then removed with their rows; each removal
#     logged with why (age or keep); the running experiment is untouched;
#     the file's freed pages are given back (freelist 0);
#   - retention without an age or a count is a config error (exit 2).
set -euo pipefail
. "$RELISH_SRC/tests/support/serve-lib.sh"
serve_lib_init retention
serve_users 1
PY=/usr/bin/python3
mkdir -p "$work/state"
"$RELISH_BUILD/mkhistory" "$work/state/relish.db" 30 >"$work/mk.out" || fail "mkhistory: $(cat "$work/mk.out")"
printf 'host:\n  memory: 2GiB\n  cpus: 4\n' >"$work/devices.yaml"
printf 'retention: {age: 20m, archive: /dev/null/archive, interval: 1s}\n' >"$work/serve.yaml"
count() { api "/api/v1/experiments?$1" | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)["experiments"]))'; }

# retention without either limit: refused at start
printf 'retention: {archive: /tmp}\n' >"$work/none.yaml"
rc=0; "$R" serve --state "$work/s2" --config "$work/none.yaml" >"$work/none.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q 'retention: expected an age, a keep count or both' "$work/none.out" ||
  fail "retention without limits: exit $rc: $(cat "$work/none.out")"

serve_start --devices "$work/devices.yaml" --config "$work/serve.yaml"
export RELISH_SERVER="unix:$sock"
serve_spec "$work/long.yaml" long 1 2000 50
as "$U1" "$R" submit long.yaml >/dev/null 2>&1 || fail "submit long"
# an archive that cannot be written: nothing goes
wait_for 30 grep -q 'event=serve.retention .*it stays' "$work/serve.log"
[ "$(count 'status=done&limit=100')$(count 'status=cancelled&limit=100')" = 2010 ] ||
  fail "experiments went without their export: $(count limit=100) left"

# the real archive, by SIGHUP
printf 'retention: {age: 20m, keep: 4, archive: %s, interval: 1s}\n' "$work/archive" >"$work/serve.yaml"
kill -HUP "$spid"
wait_for 60 bash -c "[ \"\$(curl -s --unix-socket $sock 'http://relish/api/v1/experiments' | $PY -c 'import json,sys; print(len(json.load(sys.stdin)[\"experiments\"]))')\" = 9 ]"
left=$(api /api/v1/experiments | "$PY" -c 'import json,sys; print(" ".join(e["experiment"] for e in json.load(sys.stdin)["experiments"]))')
[ "$left" = "h23 h24 h25 h26 h27 h28 h29 h30 long" ] || fail "left: $left, want h23..h30 and long"
[ "$(count status=running)" = 1 ] || fail "the running experiment was touched"
n=0
for i in $(seq 1 22); do
  owner=$([ $((i % 2)) = 1 ] && echo alice || echo bob)
  f="$work/archive/$owner/$i-h$i.json"
  [ -f "$f" ] || fail "no archive $f: $(ls -R "$work/archive" | head)"
  "$PY" -c 'import json,sys; v=json.load(open(sys.argv[1])); assert len(v) == 2 and all(t["experiment"] == sys.argv[2] for t in v), v' "$f" "h$i" ||
    fail "$f does not read back as h$i's two trials"
  n=$((n + 1))
done
# h1..h10 had ended 20 minutes before the start (more as the test runs):
# by age; the rest of the 22 by keep
age=$(grep -c 'event=serve.retention experiment=.* why=age' "$work/serve.log" || true)
keep=$(grep -c 'event=serve.retention experiment=.* why=keep' "$work/serve.log" || true)
[ "$age" -ge 10 ] && [ $((age + keep)) = 22 ] || fail "removals logged: $age by age, $keep by keep"
[ "$(sqlite3 "$work/state/relish.db" 'PRAGMA freelist_count')" = 0 ] || fail "the removed rows' pages stay in the file"
as "$U1" "$R" cancel long >/dev/null 2>&1 || fail "cancel long"
serve_stop
echo "test_serve_retention: $n experiments archived and removed, 8 kept per the rules, the running one untouched"
