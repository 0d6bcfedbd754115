#!/usr/bin/env bash
# test_serve_users.sh - relish serve with three real Unix users made for
# the test (useradd; skipped, saying why, where that is impossible): each
# submits experiments of the C trial through the unix socket, and
#  - every trial ran under its owner's uid, gid and groups (the trials
#    write them into their checkpoint folder), checkpoint folders and logs
#    are the owner's, and the service knows who submitted (owner, whoami);
#  - a user cannot cancel another's experiment (exit 6, and the message
#    names the owner), root can, the owner can, a member of the config's
#    admin group can;
#  - read: own (after a SIGHUP reload) hides others' experiments from a
#    user and refuses them by id, while the owner and root still see them;
#  - a spec asking for a host network is refused (403) unless allowed;
#  - a user's own limit (users: {u1: {experiments: 1}}) holds, and a
#    reload whose users: no longer names u1 lifts it (it stayed before).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/serve-lib.sh"
serve_lib_init serve-users
serve_users 3
serve_group adm "$U3"
printf 'host:\n  memory: 4GiB\n  cpus: 4\n' >"$work/devices.yaml"
printf 'admin_group: %s\n' "$G_NAME" >"$work/config.yaml"
export CONTAINERS_CONF="$RELISH_SRC/scripts/containers.conf" # for the container case
serve_start --devices "$work/devices.yaml" --config "$work/config.yaml"

# u1: two experiments (one to be cancelled by u1 itself), u2: two (one
# cancelled by root, one u2 keeps), u3: one; slow ones are cancelled.
serve_spec "$work/a1.yaml" "users-a1" 4 3 5
serve_spec "$work/a2.yaml" "users-a2" 50 3 200 1
serve_spec "$work/b1.yaml" "users-b1" 4 3 5
serve_spec "$work/b2.yaml" "users-b2" 50 3 200 1
serve_spec "$work/c1.yaml" "users-c1" 3 3 5
for s in a1 a2; do as "$U1" "$R" submit "$s.yaml" >>"$work/ids-u1" || fail "u1 submit $s"; done
for s in b1 b2; do as "$U2" "$R" submit "$s.yaml" >>"$work/ids-u2" || fail "u2 submit $s"; done
as "$U3" "$R" submit c1.yaml >>"$work/ids-u3" || fail "u3 submit"
id_of() { awk -v n="$1" '$2 == n {print $1}' "$work"/ids-u*; }
a2=$(id_of users-a2)
b2=$(id_of users-b2)
[ -n "$a2" ] && [ -n "$b2" ] || fail "submit printed no ids: $(cat "$work"/ids-u*)"

# who the service thinks they are
as "$U2" curl -s --unix-socket "$sock" http://relish/api/v1/whoami | grep -q "\"user\":\"$U2\",\"uid\":$UID2" \
  || fail "whoami for $U2: $(as "$U2" curl -s --unix-socket "$sock" http://relish/api/v1/whoami)"
api "/api/v1/experiments/$a2" | grep -q "\"owner\":\"$U1\",\"owner_uid\":$UID1" || fail "owner of a2: $(api "/api/v1/experiments/$a2")"

# ---- cancel: others refused, with the reason; the owner, root, admins allowed ----
set +e
out=$(as "$U2" "$R" cancel "$a2" 2>&1); rc=$?
set -e
[ "$rc" = 6 ] || fail "$U2 cancelling $U1's experiment: exit $rc: $out"
printf '%s' "$out" | grep -q "belongs to $U1, not to $U2" || fail "refusal says: $out"
api "/api/v1/experiments/$a2" | grep -q '"status":"running"' || fail "a2 was cancelled by the refusal"
"$R" cancel "$b2" --server "unix:$sock" >"$work/root-cancel" || fail "root cancel: $(cat "$work/root-cancel")"
grep -q "cancelled experiment $b2 (users-b2)" "$work/root-cancel" || fail "root cancel said: $(cat "$work/root-cancel")"
api "/api/v1/experiments/$b2" | grep -q '"status":"cancelled"' || fail "b2 not cancelled"
# an admin (u3, in the admin group) may cancel u1's experiment
as "$U3" "$R" cancel users-a2 >"$work/adm-cancel" 2>&1 || fail "admin cancel: $(cat "$work/adm-cancel")"
api "/api/v1/experiments/$a2" | grep -q '"status":"cancelled"' || fail "a2 not cancelled by the admin"
set +e
out=$(as "$U1" "$R" cancel users-a2 2>&1); rc=$?
set -e
[ "$rc" = 1 ] && printf '%s' "$out" | grep -q "cancelled already" || fail "cancelling twice: $rc $out"
# a cancelled experiment's segments are stopped, nothing of it keeps running
wait_for 20 sh -c "! curl -s --unix-socket '$sock' http://relish/api/v1/devices | grep -q '\"experiment\":\"users-[ab]2\"'"

# ---- everything else finishes ----
done_all() {
  for n in users-a1 users-b1 users-c1; do
    api "/api/v1/experiments/$n" | grep -q '"status":"done"' || return 1
  done
}
wait_for 120 done_all

# ---- who ran the trials ----
for pair in "users-a1 $U1" "users-a2 $U1" "users-b1 $U2" "users-b2 $U2" "users-c1 $U3"; do
  set -- $pair
  n=$1 u=$2
  want_uid=$(id -u "$u")
  want_groups=$(id -G "$u" | tr ' ' '\n' | sort -n | tr '\n' ' ')
  count=0
  for d in "$work"/state/runs/"$n".*/trial-*/ckpt; do
    [ -d "$d" ] || continue
    [ "$(stat -c %U "$d")" = "$u" ] || fail "$d belongs to $(stat -c %U "$d"), not $u"
    [ -f "$d/who" ] || continue # cancelled before it ran
    [ "$(sed -n 1p "$d/who")" = "$want_uid" ] || fail "$n: a trial ran as uid $(sed -n 1p "$d/who"), not $u ($want_uid)"
    got_groups=$(sed -n 2p "$d/who" | tr ' ' '\n' | sort -n | tr '\n' ' ')
    [ "$got_groups" = "$want_groups" ] || fail "$n: a trial ran with groups '$got_groups', not '$want_groups'"
    count=$((count + 1))
  done
  # the cancelled ones may have been stopped before any trial ran
  case $n in users-?2) ;; *) [ "$count" -gt 0 ] || fail "$n: no trial left its uid" ;; esac
  for l in "$work"/state/runs/"$n".*/trial-*/seg-*.log; do
    [ -e "$l" ] || continue
    [ "$(stat -c '%U %a' "$l")" = "$u 600" ] || fail "log $l is $(stat -c '%U %a' "$l")"
  done
done
# the profiles the trials left name their writers (schema 13), for the
# trim's shares at the next start: the users' uids, no unknown row
uids=$(/usr/bin/python3 -c 'import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
print(" ".join(str(r[0]) for r in db.execute("SELECT DISTINCT uid FROM profiles ORDER BY uid")))' "$work/state/relish.db")
[ -n "$uids" ] || fail "no profile was written"
for v in $uids; do
  case " $(id -u "$U1") $(id -u "$U2") $(id -u "$U3") " in
  *" $v "*) ;;
  *) fail "a profile's uid is $v, none of the users' (profiles: $uids)" ;;
  esac
done
# u3 is in the admin group: its trials had that group too
sed -n 2p "$work"/state/runs/users-c1.*/trial-0/ckpt/who | grep -qw "$(getent group "$G_NAME" | cut -d: -f3)" \
  || fail "u3's trial lacks its supplementary group"

# ---- read: own, through a SIGHUP reload ----
printf 'admin_group: %s\nread: own\n' "$G_NAME" >"$work/config.yaml"
kill -HUP "$spid"
wait_for 10 grep -q 'event=serve.reloaded.*read=own' "$work/serve.log"
a1=$(id_of users-a1)
c=$(as "$U2" curl -s -w '%{http_code}' --unix-socket "$sock" "http://relish/api/v1/experiments/$a1")
# not even that it exists: another's is "not found", as a missing one is
[ "${c: -3}" = 404 ] && printf '%s' "$c" | grep -q "no experiment with id $a1\"" || fail "read: own let $U2 read a1: $c"
c2=$(as "$U2" curl -s -w '%{http_code}' --unix-socket "$sock" "http://relish/api/v1/experiments/999999")
[ "${c/$a1/999999}" = "$c2" ] || fail "read: own tells $U1's a1 from a missing experiment: $c / $c2"
case $c in *"$U1"*) fail "read: own names a1's owner to $U2: $c" ;; esac
c=$(as "$U2" curl -s -w '%{http_code}' --unix-socket "$sock" "http://relish/api/v1/experiments/users-a1")
[ "${c: -3}" = 404 ] && ! printf '%s' "$c" | grep -q "$U1" || fail "read: own: users-a1 by name to $U2: $c"
as "$U2" curl -s --unix-socket "$sock" http://relish/api/v1/experiments >"$work/list-u2"
grep -q users-a1 "$work/list-u2" && fail "read: own lists $U1's experiment to $U2"
grep -q users-b1 "$work/list-u2" || fail "read: own hides $U2's own experiment"
# nor its trials, their metrics and segments, or a segment's log: each
# answered exactly as a missing one (a 403 named the owner)
t1=$(/usr/bin/python3 -c 'import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
t, g = db.execute("SELECT t.id, s.id FROM trials t JOIN segments s ON s.trial_id = t.id WHERE t.experiment_id = ? LIMIT 1", (int(sys.argv[2]),)).fetchone()
print(t, g)' "$work/state/relish.db" "$a1")
g1=${t1#* } t1=${t1% *}
for r in "trials/$t1" "trials/$t1/metrics" "trials/$t1/segments" "segments/$g1/log"; do
  c=$(as "$U2" curl -s -w '%{http_code}' --unix-socket "$sock" "http://relish/api/v1/$r")
  m=$(as "$U2" curl -s -w '%{http_code}' --unix-socket "$sock" "http://relish/api/v1/$(echo "$r" | sed 's/[0-9][0-9]*/999999/')")
  [ "${c: -3}" = 404 ] || fail "read: own let $U2 read $U1's /$r: $c"
  [ "$(echo "$c" | sed "s/\b$t1\b/999999/; s/\b$g1\b/999999/")" = "$m" ] ||
    fail "read: own tells $U1's /$r from a missing one: $c / $m"
  case $c in *"$U1"*) fail "read: own names the owner of /$r to $U2: $c" ;; esac
  as "$U1" curl -sf --unix-socket "$sock" "http://relish/api/v1/$r" >/dev/null || fail "the owner cannot read /$r"
done
as "$U1" curl -s --unix-socket "$sock" "http://relish/api/v1/experiments/$a1" | grep -q '"status":"done"' \
  || fail "the owner cannot read a1 under read: own"
api /api/v1/experiments | grep -q users-b1 || fail "root cannot list everything under read: own"

# ---- a spec may not ask for more than the service allows ----
sed -e 's/name: users-c1/name: users-net/' -e 's/^trial:/trial:\n  executor: podman\n  image: localhost\/none\n  network: host/' \
  "$work/c1.yaml" >"$work/net.yaml"
set +e
out=$(as "$U3" "$R" submit net.yaml 2>&1); rc=$?
set -e
[ "$rc" = 6 ] && printf '%s' "$out" | grep -q "trial.network: host" || fail "host network: $rc $out"

# ---- containers run as their submitter too (podman --user UID:GID) ----
if ! command -v podman >/dev/null; then
  echo "test_serve_users: the container case is skipped: podman is not installed"
elif ! why=$("$RELISH_SRC/tests/support/nested-skip.sh" podman); then
  echo "test_serve_users: the container case is skipped: $why"
else
  "$RELISH_SRC/scripts/podman-image.sh" >/dev/null
  # bind mounts are a grant: refused until the config allows them
  sed -e 's/name: users-c1/name: users-ctr/' \
      -e "s|^trial:|trial:\n  executor: podman\n  image: localhost/relish-host\n  mounts: [\"/usr:/usr:ro\", \"$work:$work:ro\"]|" \
    "$work/c1.yaml" >"$work/ctr.yaml"
  set +e
  out=$(as "$U1" "$R" submit ctr.yaml 2>&1); rc=$?
  set -e
  [ "$rc" = 6 ] && printf '%s' "$out" | grep -q "trial.mounts: /usr:/usr:ro" || fail "mounts not refused: $rc $out"
  printf 'admin_group: %s\nallow: [trial.mounts]\n' "$G_NAME" >"$work/config.yaml"
  kill -HUP "$spid"
  wait_for 10 sh -c "[ \"\$(grep -c 'event=serve.reloaded' '$work/serve.log')\" -ge 2 ]"
  as "$U1" "$R" submit ctr.yaml --follow >"$work/ctr.out" 2>&1 || fail "container experiment: $(cat "$work/ctr.out")"
  n=0
  for d in "$work"/state/runs/users-ctr.*/trial-*/ckpt; do
    [ -f "$d/who" ] || continue
    [ "$(sed -n 1p "$d/who")" = "$UID1" ] || fail "a container trial ran as uid $(sed -n 1p "$d/who"), not $U1 ($UID1)"
    n=$((n + 1))
  done
  [ "$n" -gt 0 ] || fail "no container trial left its uid"
  podman ps -aq --filter label=relish.experiment=users-ctr | xargs -r podman rm -f -t 0 >/dev/null 2>&1 || true
fi

# ---- a user's own limit, and a reload that takes it out ----
reload_config "admin_group: $G_NAME
users: {$U1: {experiments: 1}}"
serve_spec "$work/lim1.yaml" "users-lim1" 50 3 200 1
serve_spec "$work/lim2.yaml" "users-lim2" 50 3 200 1
as "$U1" "$R" submit lim1.yaml >/dev/null || fail "u1 submit lim1"
set +e
out=$(as "$U1" "$R" submit lim2.yaml 2>&1); rc=$?
set -e
# 409, exit 1 (busy: submit again once one has ended; docs/cli.md)
[ "$rc" = 1 ] && printf '%s' "$out" | grep -q "the most the service allows one user" ||
  fail "users.$U1.experiments 1: a second running experiment was not refused: $rc $out"
reload_config "admin_group: $G_NAME"
# the rule named u1 only: without it u1 has the default (no limit)
as "$U1" "$R" submit lim2.yaml >/dev/null || fail "u1's limit stayed after a reload took it out"
for n in users-lim1 users-lim2; do as "$U1" "$R" cancel "$n" >/dev/null || fail "cancel $n"; done

serve_stop
echo "test_serve_users: ok"
