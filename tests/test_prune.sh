#!/usr/bin/env bash
# test_prune.sh - relish prune (issue 27, item 3): the retention rule on
# demand, over 30 ended experiments of two owners (tests/support/mkhistory,
# a minute apart, each with 400 metric rows; h2 made "running" by hand).
# Without a service (--state):
#   - no rule (exit 2); --archive without --state/--db (exit 2);
#   - --dry-run lists the 21 it would remove and changes nothing;
#   - an archive that cannot be written, or a folder of it another user
#     owns or may write: exit 1, nothing removed (rows, folders), each
#     error said;
#   - --age 20m --keep 4: exit 0; h23..h30 and the running h2 stay; each
#     archive reads back as what `relish export --format json` wrote of it
#     before; their run folders are gone, the others' stay; the database's
#     pages shrink (page_count, freelist 0);
# A relish run database (--db): two experiments run, --keep 1 exports and
# removes the older with its folder (found from its segments' logs).
# Beside a running relish serve (root: real users):
#   - --state on the service's database: exit 5, nothing removed;
#   - through the service: a user who is not root nor admin is refused
#     (exit 6); no rule anywhere is exit 2; root's --keep 2 removes through
#     the service (its log says so, by=root), the running experiment stays,
#     the archive is STATE/archive; no service reachable is exit 7.
set -euo pipefail
. "$RELISH_SRC/tests/support/serve-lib.sh"
serve_lib_init prune
PY=/usr/bin/python3
st=$work/state
mkdir -p "$st/runs"
"$RELISH_BUILD/mkhistory" "$st/relish.db" 30 400 >"$work/mk.out" || fail "mkhistory: $(cat "$work/mk.out")"
q() { sqlite3 "$st/relish.db" "$1"; }
q "UPDATE experiments SET status = 'running', finished_at = NULL WHERE name = 'h2'"
# each experiment's run folder, as the service names them (NAME.CREATED_MS)
for d in $(q "SELECT name || '.' || CAST(round(created_at * 1000) AS INTEGER) FROM experiments"); do
  mkdir -p "$st/runs/$d/trial-0" && echo ckpt >"$st/runs/$d/trial-0/ckpt"
done
folder() { echo "$st/runs/$(q "SELECT name || '.' || CAST(round(created_at * 1000) AS INTEGER) FROM experiments WHERE name = '$1'")"; }
h5_dir=$(folder h5); h2_dir=$(folder h2); h30_dir=$(folder h30)
"$R" export --db "$st/relish.db" --format json --experiment h5 >"$work/h5.export.json" ||
  fail "export h5"
pages0=$(q 'PRAGMA page_count')
prune() { rc=0; "$R" prune "$@" >"$work/out" 2>"$work/err" || rc=$?; }

prune --state "$st"
[ "$rc" = 2 ] && grep -q 'which experiments? give --age, --keep' "$work/err" || fail "no rule: exit $rc: $(cat "$work/err")"
prune --archive /tmp --keep 1
[ "$rc" = 2 ] && grep -q -- '--archive: only with --state or --db' "$work/err" || fail "--archive alone: exit $rc: $(cat "$work/err")"
prune --state "$st" --keep 0
[ "$rc" = 2 ] || fail "--keep 0: exit $rc"

prune --state "$st" --age 20m --keep 4 --dry-run
[ "$rc" = 0 ] && grep -q '^21 experiments would go' "$work/out" || fail "dry run: exit $rc: $(cat "$work/out" "$work/err")"
grep -q '^would go 5 h5 (alice): by age' "$work/out" || fail "dry run does not list h5 by age: $(head -3 "$work/out")"
[ "$(q 'SELECT count(*) FROM experiments')" = 30 ] && [ ! -e "$st/archive" ] && [ -d "$h5_dir" ] ||
  fail "the dry run changed something"

# an archive that cannot be written (a file where its folder would be)
touch "$work/notafolder"
prune --state "$st" --age 20m --keep 4 --archive "$work/notafolder/archive"
[ "$rc" = 1 ] || fail "unwritable archive: exit $rc, want 1: $(cat "$work/err")"
grep -q '^kept     5 h5 (alice): creating .*notafolder/archive' "$work/out" || fail "the failure is not said: $(head -3 "$work/out")"
grep -q '21 experiments could not be exported or removed; they stay' "$work/err" || fail "no summary: $(cat "$work/err")"
[ "$(q 'SELECT count(*) FROM experiments')" = 30 ] && [ "$(q 'SELECT count(*) FROM metrics')" = 12000 ] &&
  [ -d "$h5_dir" ] || fail "something went without its export"

# an archive folder that another user owns, or that others may write
# (under /tmp, made first by someone else): they could swap its owner
# folder for a link between the check and root's write; refused, nothing
# removed
mkdir -m 0777 "$work/open"
mkdir -m 0700 "$work/theirs" && chown 65534 "$work/theirs"
for a in "$work/open" "$work/theirs"; do
  prune --state "$st" --age 20m --keep 4 --archive "$a"
  [ "$rc" = 1 ] && grep -q "^kept     5 h5 (alice): .*${a##*/} belongs to uid .* or others may write it" "$work/out" ||
    fail "archive $a: exit $rc: $(head -3 "$work/out")"
  [ "$(q 'SELECT count(*) FROM experiments')" = 30 ] && [ -z "$(ls "$a")" ] || fail "archive $a: something went or was written"
done

prune --state "$st" --age 20m --keep 4 --archive "$work/archive"
[ "$rc" = 0 ] && grep -q '^21 experiments exported and removed, 0 kept' "$work/out" || fail "prune: exit $rc: $(cat "$work/out" "$work/err")"
left=$(q "SELECT group_concat(name, ' ') FROM (SELECT name FROM experiments ORDER BY id)")
[ "$left" = "h2 h23 h24 h25 h26 h27 h28 h29 h30" ] || fail "left: $left"
[ "$(q "SELECT status FROM experiments WHERE name = 'h2'")" = running ] && [ -f "$h2_dir/trial-0/ckpt" ] ||
  fail "the running experiment was touched"
[ ! -e "$h5_dir" ] && [ -d "$h30_dir" ] || fail "run folders: h5 $(ls -d "$h5_dir" 2>&1), h30 $(ls -d "$h30_dir" 2>&1)"
grep -q 'event=serve.prune experiment=h5 id=5 owner=alice why=age trials=2 archive=.*/alice/5-h5.json by=root$' "$work/err" ||
  fail "the removal is not logged: $(head -3 "$work/err")"
"$PY" - "$work/h5.export.json" "$work/archive/alice/5-h5.json" <<'EOF' || fail "h5's archive is not what relish export wrote"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a == b and len(a) == 2 and a[0]["experiment"] == "h5", (a, b)
EOF
n=$(find "$work/archive" -name '*.json' | wc -l)
[ "$n" = 21 ] || fail "$n archives, want 21"
pages1=$(q 'PRAGMA page_count')
[ "$(q 'PRAGMA freelist_count')" = 0 ] && [ "$pages1" -lt $((pages0 * 6 / 10)) ] ||
  fail "the file did not shrink: $pages0 -> $pages1 pages (freelist $(q 'PRAGMA freelist_count'))"
echo "test_prune: --state: 21 exported and removed, $pages0 -> $pages1 pages, the running one untouched"

# ---- a relish run database (--db): its folders found from its logs ----
rd=$work/run
mkdir "$rd"
for n in one two; do
  sed -e "s/^name: .*/name: $n/" -e 's/max_trials: [0-9]*/max_trials: 2/' -e 's/^  max: [0-9]*/  max: 2/' \
    -e "s|command: \\[\"[^\"]*ctrial\"|command: [\"$RELISH_BUILD/ctrial\"|" -e 's/"20"/"1"/' \
    "$RELISH_SRC/examples/ctrial/ctrial.yaml" >"$rd/$n.yaml"
  (cd "$rd" && RELISH_DEVICES= "$R" run "$n.yaml" --db r.db --quiet >"$rd/$n.out" 2>&1) || fail "relish run $n: $(cat "$rd/$n.out")"
done
[ "$(ls "$rd/relish-runs" | wc -l)" = 2 ] || fail "relish run left no folders: $(ls "$rd")"
prune --db "$rd/r.db" --keep 1
[ "$rc" = 0 ] && [ -f "$rd/archive/$(id -un)/1-one.json" ] || fail "prune --db: exit $rc: $(cat "$work/out" "$work/err")"
[ "$(ls "$rd/relish-runs")" = "$(ls "$rd/relish-runs" | grep '^two\.')" ] && [ -n "$(ls "$rd/relish-runs")" ] ||
  fail "prune --db: folders left: $(ls "$rd/relish-runs")"
[ "$(sqlite3 "$rd/r.db" 'SELECT group_concat(name) FROM experiments')" = two ] || fail "prune --db: rows left"
echo "test_prune: --db: one exported and removed with its folder, two kept"

# ---- beside a running service ----
serve_users 2
serve_group admins "$U2"
printf 'host:\n  memory: 2GiB\n  cpus: 4\n' >"$work/devices.yaml"
printf 'admin_group: %s\n' "$G_NAME" >"$work/serve.yaml"
q "UPDATE experiments SET status = 'done', finished_at = created_at + 30 WHERE name = 'h2'"
serve_start --devices "$work/devices.yaml" --config "$work/serve.yaml"
export RELISH_SERVER="unix:$sock"
serve_spec "$work/long.yaml" long 1 2000 50
as "$U1" "$R" submit long.yaml >/dev/null 2>&1 || fail "submit long"
wait_for 30 bash -c "sqlite3 '$st/relish.db' \"SELECT count(*) FROM experiments WHERE name = 'long' AND status = 'running'\" | grep -qx 1"

prune --state "$st" --keep 1
[ "$rc" = 5 ] && grep -q 'prune through it' "$work/err" || fail "--state beside the service: exit $rc: $(cat "$work/err")"
rc=0; as "$U1" "$R" prune --keep 1 >"$work/out" 2>"$work/err" || rc=$?
[ "$rc" = 6 ] && grep -q "root's and the admin group's" "$work/err" || fail "a user's prune: exit $rc: $(cat "$work/err")"
prune
[ "$rc" = 2 ] && grep -q 'the service.s config has no retention: rule' "$work/err" || fail "no rule: exit $rc: $(cat "$work/err")"
rc=0; as "$U2" "$R" prune --keep 2 --dry-run >"$work/out" 2>"$work/err" || rc=$?
[ "$rc" = 0 ] && grep -q '^5 experiments would go' "$work/out" || fail "an admin's dry run: exit $rc: $(cat "$work/out" "$work/err")"
prune --keep 2
[ "$rc" = 0 ] && grep -q '^5 experiments exported and removed' "$work/out" || fail "prune through the service: exit $rc: $(cat "$work/out" "$work/err")"
wait_for 10 grep -q 'event=serve.prune experiment=h23 .*why=keep .*archive=.*/state/archive/alice/23-h23.json by=root' "$work/serve.log"
[ -f "$st/archive/alice/23-h23.json" ] || fail "no archive in STATE/archive"
left=$(api /api/v1/experiments | "$PY" -c 'import json,sys; print(" ".join(e["experiment"] for e in json.load(sys.stdin)["experiments"]))')
[ "$left" = "h27 h28 h29 h30 long" ] || fail "left after --keep 2: $left"
as "$U1" "$R" cancel long >/dev/null 2>&1 || fail "cancel long"
serve_stop
rc=0; RELISH_SERVER="unix:$st/relish.sock" "$R" prune --keep 1 >"$work/out" 2>"$work/err" || rc=$?
[ "$rc" = 7 ] || fail "no service: exit $rc: $(cat "$work/err")"
echo "test_prune: through the service: refused to a user (6), beside it with --state (5), 5 removed by root's --keep 2, the running one untouched"
