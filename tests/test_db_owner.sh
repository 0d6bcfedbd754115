#!/usr/bin/env bash
# test_db_owner.sh - only its owner changes a state database (store.c), as
# git refuses a repository of another user's: what a database holds names
# folders relish removes and files it writes, so root's `relish delete
# --db` or `prune --db` on a user's relish run database did what the user
# wrote there.  Real users (useradd; skipped, saying why, where that is
# impossible):
#   - $U1's database: root's delete, prune, cancel and run --db on it are
#     refused (exit 6, naming the owner and how to run as them), nothing in
#     it changes and the folder it names (a root-only one, as its user
#     could have written it) stays; root reads it (status, export) as
#     before; $U1 deletes from it;
#   - a database of root's in a folder everyone may write: $U1's link
#     named DB-lock to a file of root's is not
#     followed: root's delete is refused (exit 6) and the file is intact;
#   - an owner "../../.." in a database: prune's archive is not written
#     outside the archive folder (the experiment is kept, the error says
#     why).
set -euo pipefail
. "$RELISH_SRC/tests/support/serve-lib.sh"
serve_lib_init db-owner
serve_users 1
q() { sqlite3 "$1" "$2"; }
udir=$work/u1
mkdir -p "$udir"
"$RELISH_BUILD/mkhistory" "$udir/relish.db" 4 10 >"$work/mk.out" || fail "mkhistory: $(cat "$work/mk.out")"
# a folder only root may touch, named the way the database points at one
target=$work/rootonly/h3.$(q "$udir/relish.db" "SELECT CAST(round(created_at * 1000) AS INTEGER) FROM experiments WHERE name = 'h3'")
mkdir -p "$target/trial-0"
echo keep >"$target/trial-0/file"
chmod 700 "$work/rootonly"
q "$udir/relish.db" "UPDATE segments SET log_path = '$target/trial-0/seg-0.log' WHERE trial_id IN (SELECT t.id FROM trials t JOIN experiments e ON e.id = t.experiment_id WHERE e.name = 'h3')"
chown -R "$U1" "$udir"
n0=$(q "$udir/relish.db" "SELECT count(*) FROM experiments")

for cmd in "delete h3 --db $udir/relish.db" "prune --db $udir/relish.db --keep 1" \
           "cancel h3 --db $udir/relish.db"; do
  set +e
  out=$("$R" $cmd 2>&1); rc=$?
  set -e
  [ "$rc" = 6 ] && printf '%s' "$out" | grep -q "belongs to $U1 (uid $UID1), not to you (uid 0): relish changes a database only as its owner (run it as $U1" ||
    fail "root's relish $cmd on $U1's database: exit $rc: $out"
done
echo "owner: root's delete, prune and cancel on $U1's database: exit 6: $(printf '%s' "$out" | head -1 | cut -c1-200)"
cat >"$work/q.yaml" <<S
name: q
objective: {metric: accuracy, mode: max}
search: {algorithm: random, seed: 1, max_trials: 1, space: {x: {type: uniform, low: 0, high: 1}}}
schedule: {algorithm: none, resource: epoch, max: 1}
trial: {command: ["$CTRIAL", "--x", "{x}"]}
S
set +e
out=$("$R" run "$work/q.yaml" --db "$udir/relish.db" --quiet 2>&1); rc=$?
set -e
[ "$rc" = 6 ] && printf '%s' "$out" | grep -q "belongs to $U1" || fail "root's relish run on $U1's database: exit $rc: $out"
[ "$(q "$udir/relish.db" "SELECT count(*) FROM experiments")" = "$n0" ] || fail "root's commands changed $U1's database"
[ -f "$target/trial-0/file" ] || fail "root removed the folder $U1's database named"
[ ! -e "$udir/relish.db-lock" ] || [ "$(stat -c %u "$udir/relish.db-lock")" = "$UID1" ] || fail "root left a lock of its own in $U1's folder"
"$R" status --db "$udir/relish.db" >/dev/null || fail "root cannot read $U1's database"
"$R" export --db "$udir/relish.db" --format csv >/dev/null || fail "root cannot export $U1's database"
as "$U1" "$R" delete h2 --db "$udir/relish.db" >"$work/own.out" 2>&1 || fail "$U1 cannot delete from its own database: $(cat "$work/own.out")"
[ "$(q "$udir/relish.db" "SELECT count(*) FROM experiments")" = "$((n0 - 1))" ] || fail "$U1's delete removed nothing"
echo "owner: root reads it; $U1 deletes h2 from it"

# A lock link in a folder everyone may write (not sticky: in a sticky one
# the kernel's protected_symlinks, where on, refuses the link itself)
shared=$work/shared
mkdir -p "$shared"
chmod 0777 "$shared"
"$RELISH_BUILD/mkhistory" "$shared/relish.db" 2 10 >"$work/mk2.out" || fail "mkhistory: $(cat "$work/mk2.out")"
echo "root's own file" >"$work/root-file"
chmod 600 "$work/root-file"
as "$U1" ln -s "$work/root-file" "$shared/relish.db-lock"
set +e
out=$("$R" delete h1 --db "$shared/relish.db" 2>&1); rc=$?
set -e
[ "$rc" = 6 ] && printf '%s' "$out" | grep -q "driver lock" || fail "root followed $U1's lock link: exit $rc: $out"
[ "$(cat "$work/root-file")" = "root's own file" ] || fail "root overwrote the file the lock link named: $(cat "$work/root-file")"
echo "lock: $U1's link is not followed: $(printf '%s' "$out" | head -1 | cut -c1-160)"

# An owner that would climb out of the archive
own=$work/own
mkdir -p "$own"
"$RELISH_BUILD/mkhistory" "$own/relish.db" 2 10 >"$work/mk3.out" || fail "mkhistory: $(cat "$work/mk3.out")"
q "$own/relish.db" "UPDATE experiments SET owner = '../../escaped'"
set +e
out=$("$R" prune --db "$own/relish.db" --age 1s --archive "$own/archive/x" 2>&1); rc=$?
set -e
[ ! -e "$own/escaped" ] && [ -z "$(find "$own" -name '*.json')" ] || fail "the archive was written outside its folder: $(find "$own" -name '*.json')"
[ "$rc" = 1 ] && printf '%s' "$out" | grep -q "cannot name a file in" || fail "prune with an owner ../..: exit $rc: $out"
echo "archive: an owner '../../escaped' is refused: $(printf '%s' "$out" | grep -m1 'cannot name' | cut -c1-160)"
echo "test_db_owner: ok"
