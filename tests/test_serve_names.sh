#!/usr/bin/env bash
# test_serve_names.sh - experiment names are per user, ids global (issue
# 30 item 3), on a real relish serve with two real users:
#   - both users submit the same spec (one name): both run;
#   - each user's `relish status NAME` is their own; root's bare NAME is
#     ambiguous (exit 2, naming both owners and ids), OWNER/NAME is not;
#   - a user submitting a name they have is refused (409, exit 1) with the
#     way out: `relish submit --name` (which works) and `relish delete`;
#   - `relish delete`: refused for a running experiment (exit 1) and for
#     another user's (exit 6); after `relish cancel`, the owner removes it:
#     rows and folder gone, the name free again (the same spec submits);
#     root removes u2's by OWNER/NAME;
#   - `relish delete --db` removes an experiment of a relish run database
#     and its folder, and is refused while a relish run holds the file.
set -euo pipefail
. "$RELISH_SRC/tests/support/serve-lib.sh"
serve_lib_init names
serve_users 2
printf 'host:\n  memory: 2GiB\n  cpus: 4\n' >"$work/devices.yaml"
serve_spec "$work/same.yaml" same 2 50 100 1
serve_start --devices "$work/devices.yaml"
export RELISH_SERVER="unix:$sock"
PY=/usr/bin/python3

as "$U1" "$R" submit same.yaml >"$work/u1.id" 2>&1 || fail "u1 submit: $(cat "$work/u1.id")"
as "$U2" "$R" submit same.yaml >"$work/u2.id" 2>&1 || fail "u2 submit of the same spec: $(cat "$work/u2.id")"
id1=$(cut -d' ' -f1 "$work/u1.id") id2=$(cut -d' ' -f1 "$work/u2.id")
[ "$id1" != "$id2" ] || fail "both got id $id1"
echo "u1: $(cat "$work/u1.id"); u2: $(cat "$work/u2.id")"

# each their own; root must say whose
own() { as "$1" "$R" status same --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])'; }
[ "$(own "$U1")" = "$id1" ] || fail "u1's status same is not u1's"
[ "$(own "$U2")" = "$id2" ] || fail "u2's status same is not u2's"
rc=0; out=$("$R" status same 2>&1) || rc=$?
[ "$rc" = 2 ] || fail "root's status same: exit $rc, want 2: $out"
echo "$out" | grep -q "$U1's (id $id1)" && echo "$out" | grep -q "$U2's (id $id2)" ||
  fail "the ambiguity does not name both: $out"
[ "$("$R" status "$U2/same" --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')" = "$id2" ] ||
  fail "root's status $U2/same"
"$R" trials --experiment "$U1/same" --json >/dev/null || fail "trials --experiment OWNER/NAME"
# two experiments named alike: the table says whose each is (issue 30,
# item 11: relish status had no OWNER column)
COLUMNS=200 "$R" status >"$work/status.all" || fail "root's status"
head -1 "$work/status.all" | grep -q '^EXPERIMENT  *OWNER  *STATUS ' || fail "status has no OWNER column: $(head -1 "$work/status.all")"
grep -Eq "^same +$U1 +running " "$work/status.all" && grep -Eq "^same +$U2 +running " "$work/status.all" ||
  fail "status does not show both owners: $(cat "$work/status.all")"

# a name one has: refused, with the way out; --name is that way
rc=0; out=$(as "$U1" "$R" submit same.yaml 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "u1 submitting same twice: exit $rc, want 1: $out"
echo "$out" | grep -q -- '--name' && echo "$out" | grep -q 'relish delete' ||
  fail "the refusal does not say how: $out"
as "$U1" "$R" submit same.yaml --name same-2 >"$work/u1b.id" 2>&1 || fail "submit --name: $(cat "$work/u1b.id")"
grep -q ' same-2$' "$work/u1b.id" || fail "submit --name printed: $(cat "$work/u1b.id")"
rc=0; out=$(as "$U1" "$R" submit same.yaml --name 'bad name' 2>&1) || rc=$?
[ "$rc" = 2 ] || fail "submit --name 'bad name': exit $rc, want 2: $out"

# delete: not while it runs, not another's; then the owner's
rc=0; out=$(as "$U1" "$R" delete same 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "deleting a running experiment: exit $rc, want 1: $out"
echo "$out" | grep -q 'cancel it first' || fail "the refusal does not say to cancel: $out"
as "$U1" "$R" cancel same >/dev/null 2>&1 || fail "u1 cancel"
rc=0; out=$(as "$U2" "$R" delete "$id1" 2>&1) || rc=$?
[ "$rc" = 6 ] || fail "u2 deleting u1's: exit $rc, want 6: $out"
folder=
for d in "$work/state/runs/same."*; do
  if [ -n "$(find "$d" -user "$U1" -print -quit 2>/dev/null)" ]; then folder=$d; fi
done
[ -n "$folder" ] || fail "no folder of u1's experiment under runs/"
deleted() { as "$U1" "$R" delete same >"$work/del.out" 2>&1; }
wait_for 30 deleted
grep -q "deleted experiment $id1 (same)" "$work/del.out" || fail "delete said: $(cat "$work/del.out")"
[ ! -e "$folder" ] || fail "u1's folder $folder is still there"
rc=0; api "/api/v1/experiments/$id1" | grep -q RL_ENOTFOUND || fail "experiment $id1 still answers"
[ "$(own "$U2")" = "$id2" ] || fail "u2's experiment was touched"
as "$U1" "$R" submit same.yaml >"$work/u1c.id" 2>&1 || fail "the name is not free again: $(cat "$work/u1c.id")"
[ "$(cut -d' ' -f1 "$work/u1c.id")" != "$id1" ] || fail "a new experiment got the old id"
# root, by OWNER/NAME
"$R" cancel "$U2/same" >/dev/null || fail "root cancel $U2/same"
rdel() { "$R" delete "$U2/same" >"$work/rdel.out" 2>&1; }
wait_for 30 rdel
grep -q "deleted experiment $id2" "$work/rdel.out" || fail "root delete said: $(cat "$work/rdel.out")"
serve_stop

# a relish run database
cat >"$work/local.yaml" <<S
name: local
objective: {metric: accuracy, mode: max}
search: {algorithm: random, seed: 1, max_trials: 2, max_concurrent: 2,
         space: {x: {type: uniform, low: 0.0, high: 1.0}, y: {type: uniform, low: -5.0, high: 5.0}}}
schedule: {algorithm: none, resource: epoch, max: 2}
trial:
  command: ["$CTRIAL", "--x", "{x}", "--y", "{y}"]
  resources: {memory: 32MiB, cpus: 0.5}
S
unset RELISH_SERVER
"$R" run "$work/local.yaml" --db "$work/local.db" --devices "$work/devices.yaml" >/dev/null 2>&1 || fail "local run"
ldir=$(ls -d "$work/relish-runs/local."*)
"$R" delete local --db "$work/local.db" >"$work/ldel.out" || fail "delete --db: $(cat "$work/ldel.out")"
grep -q "deleted experiment 1 (local) and its folder $ldir" "$work/ldel.out" || fail "delete --db said: $(cat "$work/ldel.out")"
[ ! -e "$ldir" ] || fail "delete --db left $ldir"
[ "$("$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM trials").fetchone()[0])' "$work/local.db")" = 0 ] ||
  fail "delete --db left trials"
sed -i 's/max: 2}/max: 200}/; s/"{y}"\]/"{y}", "--sleep-ms", "100"]/' "$work/local.yaml"
"$R" run "$work/local.yaml" --db "$work/local.db" --devices "$work/devices.yaml" >/dev/null 2>&1 &
rp=$!
running() { # the run is under way: a segment of it runs
  [ "$("$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM segments WHERE status=\x27running\x27").fetchone()[0])' "$work/local.db" 2>/dev/null)" != 0 ]
}
wait_for 30 running
rc=0
"$R" delete local --db "$work/local.db" >"$work/busy.out" 2>&1 || rc=$?
kill -INT "$rp"; wait "$rp" 2>/dev/null || true
[ "$rc" = 5 ] || fail "delete --db beside a run: exit $rc, want 5: $(cat "$work/busy.out")"
grep -q 'in use by another relish' "$work/busy.out" || fail "delete --db beside a run said: $(cat "$work/busy.out")"
echo "ok: names per user, submit --name, delete (service and --db)"
