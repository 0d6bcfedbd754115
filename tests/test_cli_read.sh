#!/usr/bin/env bash
# test_cli_read.sh - the read commands (status, trials, best, logs, export)
# against a database built through the store API by tests/support/mkdb.c
# (its header lists the ids asserted here), with and without --json, and the
# documented exit codes: 2 usage, 3 not found, 4 store error.
set -euo pipefail

: "${RELISH:?RELISH must name the relish binary}"
: "${RELISH_BUILD:?RELISH_BUILD must name the build folder}"
PY=/usr/bin/python3
T=$(mktemp -d /tmp/relish-cli-read.XXXXXX)
trap 'rm -rf "$T"' EXIT
DB="$T/state.db"
"$RELISH_BUILD/mkdb" "$DB" "$T"

fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# expect_rc CODE CMD...: run, keep stdout in $T/out and stderr in $T/err.
expect_rc() {
  local want=$1; shift
  local rc=0
  "$@" >"$T/out" 2>"$T/err" || rc=$?
  if [ "$rc" -ne "$want" ]; then
    fail "$* -> exit $rc, expected $want; stderr: $(cat "$T/err")"
  fi
}
# pycheck EXPR: evaluate a Python assertion with j = JSON of $T/out.
pycheck() {
  if ! $PY -c "import json,sys; j=json.load(open('$T/out')); $1" 2>"$T/pyerr"; then
    fail "check failed: $1 ($(tail -1 "$T/pyerr")); output: $(head -c 600 "$T/out")"
  fi
}
contains() {
  if ! grep -qF -- "$1" "$T/out"; then fail "output lacks '$1': $(head -c 600 "$T/out")"; fi
}

# ---- best ----
expect_rc 0 "$RELISH" best --db "$DB" --json
pycheck 'assert j["experiment"]=="digits" and j["trial_id"]==3, j'
pycheck 'assert j["params"]=={"lr":0.1,"layers":2}, j["params"]'
pycheck 'assert j["objective"]=={"metric":"accuracy","mode":"max","value":0.9}, j["objective"]'
pycheck 'assert j["resource"]==9 and j["status"]=="completed", j'
expect_rc 0 "$RELISH" best --db "$DB" --experiment older --json
pycheck 'assert j["trial_id"]==1 and j["objective"]=={"metric":"loss","mode":"min","value":0.25}, j'
expect_rc 0 "$RELISH" best --db "$DB"
contains 'digits: trial 3 (index 0, completed): accuracy = 0.9 (max) at resource 9, params {"lr":0.1,"layers":2}'

# ---- status ----
expect_rc 0 "$RELISH" status --db "$DB" --json
pycheck 'assert [e["experiment"] for e in j]==["older","digits"], j'
pycheck 'd=j[1]; assert d["trials"]=={"total":4,"pending":1,"running":1,"paused":0,"completed":1,"stopped":1,"failed":0,"cancelled":0}, d["trials"]'
pycheck 'd=j[1]; assert d["best"]=={"trial_id":3,"value":0.9,"resource":9} and d["status"]=="running", d'
pycheck 'o=j[0]; assert o["status"]=="done" and o["elapsed_s"]==3600 and o["best"]["trial_id"]==1, o'
expect_rc 0 "$RELISH" status --db "$DB" older --json
pycheck 'assert len(j)==1 and j[0]["trials"]["failed"]==1, j'
expect_rc 0 "$RELISH" status --db "$DB"
contains '0.9 (trial 3)'
contains '0.25 (trial 1)'
contains 'max accuracy'
[ "$(wc -l <"$T/out")" -eq 3 ] || fail "status: expected header + 2 lines"

# ---- trials ----
expect_rc 0 "$RELISH" trials --db "$DB" --json
pycheck 'assert [t["id"] for t in j]==[3,4,5,6] and [t["status"] for t in j]==["completed","stopped","running","pending"], j'
pycheck 't=j[2]; assert t["oom"]==1 and t["segments"]==2 and t["error"].startswith("CUDA out of memory") and t["objective"] is None, t'
pycheck 't=j[1]; assert t["objective"]==0.95 and t["resource"]==3 and t["params"]=={"lr":0.01,"layers":3}, t'
expect_rc 0 "$RELISH" trials --db "$DB" --experiment older
contains 'exit 1: "nan", loss diverged'
expect_rc 0 "$RELISH" trials --db "$DB"
contains 'CUDA out of memory. Tried to allocate 2.00 GiB'
[ "$(wc -l <"$T/out")" -eq 6 ] || fail "trials: expected 2 header lines + 4 trials"
# tables show params to 6 significant digits; --json keeps every digit
contains '{"lr":0.483003,"layers":1}'
expect_rc 0 "$RELISH" trials --db "$DB" --json
pycheck 't=j[3]; assert t["params"]=={"lr":0.48300251266298522,"layers":1}, t["params"]'
# On an 80-column terminal (COLUMNS) no row is wider than 80: the detail
# columns go, long errors end in an ellipsis; --wide keeps everything.
width_ok() { $PY -c 'import sys; sys.exit(any(len(l.rstrip("\n")) > int(sys.argv[2]) for l in open(sys.argv[1], encoding="utf-8")))' "$T/out" "$1"; }
for cmd in trials status; do
  COLUMNS=80 expect_rc 0 "$RELISH" $cmd --db "$DB"
  width_ok 80 || fail "$cmd at 80 columns: $(cat "$T/out")"
done
COLUMNS=80 expect_rc 0 "$RELISH" trials --db "$DB"
contains '…'
head -2 "$T/out" | grep -Eq '^ *ID +STATUS +RESOURCE +OBJECTIVE +PARAMS +LAST ERROR$' ||
  fail "trials at 80 columns: header $(head -2 "$T/out")"
COLUMNS=80 expect_rc 0 "$RELISH" trials --db "$DB" --wide
head -2 "$T/out" | grep -q 'EST_MiB  PEAK_MiB' || fail "--wide: $(head -2 "$T/out")"
contains 'CUDA out of memory. Tried to allocate 2.00 GiB'

# ---- logs ----
expect_rc 0 "$RELISH" logs 3 --db "$DB"
[ "$(grep -c '^==> trial 3 segment' "$T/out")" -eq 2 ] || fail "logs 3: two segment headers"
contains 'RELISH epoch=9 accuracy=0.9'
# Segment 0 comes before segment 1.
[ "$(grep -n 'segment 0 of trial 3' "$T/out" | cut -d: -f1)" -lt \
  "$(grep -n 'segment 1 of trial 3' "$T/out" | cut -d: -f1)" ] || fail "logs out of order"
expect_rc 0 "$RELISH" logs --db "$DB" --segment 1 3
contains '==> trial 3 segment 1 [3, 9] completed on gpu0 exit 0'
if grep -q 'segment 0 of trial 3' "$T/out"; then fail "--segment 1 printed segment 0"; fi
expect_rc 0 "$RELISH" logs 4 --db "$DB"
contains 'cannot be read'
expect_rc 0 "$RELISH" logs 6 --db "$DB"
contains 'has no segments yet'
expect_rc 3 "$RELISH" logs 999 --db "$DB"
expect_rc 3 "$RELISH" logs 3 --segment 7 --db "$DB"
expect_rc 2 "$RELISH" logs abc --db "$DB"
expect_rc 2 "$RELISH" logs --db "$DB"

# ---- export ----
expect_rc 0 "$RELISH" export --db "$DB" --format csv
$PY - "$T/out" <<'EOF' || fail "export trials csv"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert [r["trial_id"] for r in rows] == ["1", "2", "3", "4", "5", "6"], rows
assert rows[1]["error"] == 'exit 1: "nan", loss diverged', rows[1]
assert rows[2]["params"] == '{"lr":0.1,"layers":2}' and rows[2]["objective"] == "0.9", rows[2]
assert rows[5]["objective"] == "" and rows[4]["oom"] == "1", rows[4]
EOF
expect_rc 0 "$RELISH" export --db "$DB" --format json --what metrics --experiment digits
pycheck 'assert len(j)==12 and all(m["name"]=="accuracy" for m in j), len(j)'
pycheck 'assert [m["value"] for m in j if m["trial_id"]==3]==[0.5,0.7,0.8,0.82,0.84,0.86,0.88,0.89,0.9]'
pycheck 'assert j[0]["resource"]==1 and j[0]["segment_id"]==3, j[0]'
expect_rc 0 "$RELISH" export --db "$DB" --format csv --what segments
$PY - "$T/out" <<'EOF' || fail "export segments csv"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == 7, len(rows)
oom = [r for r in rows if r["status"] == "oom"]
assert len(oom) == 1 and oom[0]["segment_id"] == "6" and oom[0]["peak_mem_mib"] == "1199", oom
assert rows[6]["status"] == "running" and rows[6]["ended_at"] == "" and rows[6]["device"] == "gpu1"
EOF
expect_rc 0 "$RELISH" export --db "$DB" --json --what segments
pycheck 'assert len(j)==7 and j[5]["status"]=="oom" and j[5]["mem_reserved_mib"]==1200 and j[6]["exit_code"] is None, j[5]'
# experiments, and everything at once (issue 30, item 11: "everything" in
# the README was the trials alone)
expect_rc 0 "$RELISH" export --db "$DB" --format csv --what experiments
$PY - "$T/out" <<'EOF' || fail "export experiments csv"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert sorted(r["experiment"] for r in rows) == ["digits", "older"], rows
assert all(r["status"] and r["objective"] and r["mode"] in ("max", "min") for r in rows), rows
EOF
expect_rc 0 "$RELISH" export --db "$DB" --json --what experiments
pycheck 'assert sorted(e["experiment"] for e in j)==["digits","older"] and all(e["trials"]["total"]>0 for e in j), j'
expect_rc 0 "$RELISH" export --db "$DB" --format json --what all
pycheck 'assert sorted(j)==["experiments","metrics","segments","trials"], sorted(j)'
pycheck 'assert (len(j["experiments"]), len(j["trials"]), len(j["segments"])) == (2, 6, 7), {k: len(v) for k, v in j.items()}'
pycheck 'assert len(j["metrics"]) >= 12 and sorted(t["id"] for t in j["trials"]) == [1, 2, 3, 4, 5, 6], j["trials"]'
expect_rc 2 "$RELISH" export --db "$DB" --format csv --what all
if ! grep -q -- '--what all needs --format json' "$T/err"; then fail "export --what all as CSV: $(cat "$T/err")"; fi

# ---- exit codes ----
for cmd in status trials best "logs 3" "export --format csv"; do
  # shellcheck disable=SC2086
  expect_rc 3 "$RELISH" $cmd --db "$T/missing.db"
  grep -q 'no state database' "$T/err" || fail "$cmd: missing-db message: $(cat "$T/err")"
  # shellcheck disable=SC2086
  expect_rc 2 "$RELISH" $cmd --db "$DB" --bogus
done
[ ! -e "$T/missing.db" ] || fail "a read command created the missing database"
expect_rc 3 "$RELISH" best --db "$DB" --experiment nope
expect_rc 3 "$RELISH" trials --db "$DB" --experiment nope
expect_rc 3 "$RELISH" status --db "$DB" nope
expect_rc 2 "$RELISH" export --db "$DB"
expect_rc 2 "$RELISH" export --db "$DB" --format xml
expect_rc 2 "$RELISH" export --db "$DB" --format csv --what things
expect_rc 2 "$RELISH" export --db "$DB" --format csv --json
expect_rc 2 "$RELISH" best --db
expect_rc 0 "$RELISH" best --help
contains 'usage: relish best'
contains 'Pareto front'

# Several objectives (issue 29): status and trials show every objective,
# best prints the front (mkdb --front: trial 3 is dominated).
"$RELISH_BUILD/mkdb" --front "$T/front.db"
expect_rc 0 "$RELISH" status --db "$T/front.db" --wide
contains 'min f1, max f2'
contains '3 on the front'
expect_rc 0 "$RELISH" trials --db "$T/front.db" --wide
contains '# experiment tradeoff (min f1, max f2)'
for row in '1 .*1, 5 \*' '2 .*2, 9 \*' '4 .*0.5, 1 \*'; do
  grep -Eq "^ *$row" "$T/out" || fail "trials: no row '$row': $(cat "$T/out")"
done
grep -E '^ *3 ' "$T/out" | grep -q '3, 4' || fail "trials: trial 3's values: $(cat "$T/out")"
if grep -E '^ *3 ' "$T/out" | grep -qF '*'; then fail "trials: dominated trial 3 marked: $(cat "$T/out")"; fi
expect_rc 0 "$RELISH" best --db "$T/front.db"
[ "$(grep -c ': trial [0-9]* (index' "$T/out")" -eq 3 ] || fail "best: front of 3 expected: $(cat "$T/out")"
# ... and so do their --json forms: every objective and the front
# (trial 3 is dominated); one objective keeps the fields it had.
expect_rc 0 "$RELISH" status --db "$T/front.db" --json
pycheck 'e=j[0]; assert e["objectives"]==[{"metric":"f1","mode":"min"},{"metric":"f2","mode":"max"}] and e["front"]==[1,2,4], e'
expect_rc 0 "$RELISH" trials --db "$T/front.db" --json
pycheck 'v={t["id"]:(t["values"],t["front"]) for t in j}; assert v=={1:([1,5],True),2:([2,9],True),3:([3,4],False),4:([0.5,1],True)}, v'
expect_rc 0 "$RELISH" status --db "$DB" --json
pycheck 'assert all("objectives" not in e and "front" not in e for e in j), j'
expect_rc 0 "$RELISH" trials --db "$DB" --json
pycheck 'assert all("values" not in t and "front" not in t for t in j), j'
expect_rc 0 "$RELISH" trials --help
contains 'Pareto front'
expect_rc 0 "$RELISH" status --help
contains 'Pareto front'

# A database from a newer relish: a store error (4) that says so.
cp "$DB" "$T/newer.db"
$PY -c "import sqlite3; c=sqlite3.connect('$T/newer.db'); c.execute('PRAGMA user_version=99'); c.commit()"
expect_rc 4 "$RELISH" status --db "$T/newer.db"
grep -q 'newer relish' "$T/err" || fail "newer-db message: $(cat "$T/err")"
# An empty database (no experiment yet): best is "not found".
$PY -c "import sqlite3; sqlite3.connect('$T/empty.db').execute('PRAGMA user_version=0')"
expect_rc 3 "$RELISH" best --db "$T/empty.db"
grep -q 'no experiment' "$T/err" || fail "empty-db message: $(cat "$T/err")"

if [ "$fails" -ne 0 ]; then
  echo "$fails check(s) failed" >&2
  exit 1
fi
echo "test_cli_read: all checks passed"
