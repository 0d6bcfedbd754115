#!/usr/bin/env bash
# test_export_wide.sh - `relish export --what wide`: one row per trial,
# its parameters as params_NAME columns and each metric's final value (at
# the trial's highest resource) as final_NAME, over the database that
# tests/support/mkdb.c writes through the real store (two experiments
# with different parameters and metrics: the columns are their union, a
# missing one empty); CSV quoting of an error with quotes and a comma;
# JSON with the same keys (null for missing); a bad --what names wide.
set -euo pipefail
: "${RELISH:?}" "${RELISH_BUILD:?}"
work=$(mktemp -d /tmp/relish-test-export-wide-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset RELISH_SERVER
"$RELISH_BUILD/mkdb" "$work/db" "$work" >/dev/null
"$RELISH" export --db "$work/db" --what wide --format csv >"$work/wide.csv" || fail "export wide"
head -1 "$work/wide.csv" | grep -qx 'experiment,trial_id,index,status,resource,objective,objective_resource,segments,oom,error,created_at,updated_at,params_lr,params_layers,final_loss,final_accuracy' ||
  fail "header: $(head -1 "$work/wide.csv")"
[ "$(wc -l <"$work/wide.csv")" = 7 ] || fail "want 6 trials and a header: $(cat "$work/wide.csv")"
grep -qx 'older,1,0,completed,5,0.25,5,1,0,,1690000001,1690000100,0.2,,0.25,' "$work/wide.csv" || fail "trial 1: $(sed -n 2p "$work/wide.csv")"
grep -q '^older,2,1,failed,0,,,1,0,"exit 1: ""nan"", loss diverged",' "$work/wide.csv" || fail "trial 2 quoting: $(sed -n 3p "$work/wide.csv")"
grep -qx 'digits,3,0,completed,9,0.9,9,2,0,,1700000001,1700000500,0.1,2,,0.9' "$work/wide.csv" || fail "trial 3: $(sed -n 4p "$work/wide.csv")"
# final = the value at the highest resource, not the best one
grep -q '^digits,4,1,stopped,3,0.95,3,1,0,,.*,0.01,3,,0.95$' "$work/wide.csv" || fail "trial 4: $(sed -n 5p "$work/wide.csv")"
/usr/bin/python3 - "$work/wide.csv" <<'P' || fail "the CSV does not read back as one row per trial"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["trial_id"] for r in rows] == ["1", "2", "3", "4", "5", "6"], rows
assert rows[2]["params_layers"] == "2" and rows[0]["params_layers"] == "", rows
P
"$RELISH" export --db "$work/db" --what wide --format json --experiment digits >"$work/wide.json" || fail "export wide json"
/usr/bin/python3 - "$work/wide.json" <<'P' || fail "JSON: $(head -c 400 "$work/wide.json")"
import json, sys
v = json.load(open(sys.argv[1]))
assert len(v) == 4 and v[0]["trial_id"] == 3, v
assert v[0]["params_lr"] == 0.1 and v[0]["params_layers"] == 2 and v[0]["final_accuracy"] == 0.9, v[0]
assert "final_loss" not in v[0] and v[3]["final_accuracy"] is None, v[3]
P
set +e
out=$("$RELISH" export --db "$work/db" --what tall --format csv 2>&1); rc=$?
set -e
[ "$rc" = 2 ] && printf '%s' "$out" | grep -q "expected experiments, trials, metrics, segments, wide or all" || fail "bad --what: $rc $out"
echo "test_export_wide: columns, final values, quoting, JSON"
