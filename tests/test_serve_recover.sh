#!/usr/bin/env bash
# test_serve_recover.sh - kill -9 of relish serve three times during a
# multi-user run, each time started again on the same state folder:
#  - every experiment of both users completes (status done, all trials
#    final, nothing left planned or running);
#  - no metric lost or doubled: across a trial's completed segments each
#    (metric, epoch) is stored exactly once, no segment stores one twice,
#    and every trial has its objective at every epoch up to where it
#    ended; rows a killed segment reported stay labelled with that (lost)
#    segment, and its re-run starts from the checkpoint those epochs
#    left, so they are neither lost nor trained twice;
#  - finished work is unchanged by each restart (completed segments and
#    their metrics before a kill are there after it);
#  - no orphan: once the restarted service has resumed, no process the
#    killed one had started is alive, and at the end no process of the
#    test users is left;
#  - the restarted service reports each resume in its log.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/serve-lib.sh"
serve_lib_init serve-recover
serve_users 2
printf 'host:\n  memory: 4GiB\n  cpus: 2\n' >"$work/devices.yaml"
db=$work/state/relish.db

spec() { # FILE NAME: ASHA, several segments per trial (resumes from checkpoints)
  serve_spec "$1" "$2" 8 9 100 2
  sed -i 's/^schedule: .*/schedule: {algorithm: asha, resource: epoch, min: 1, max: 9, reduction_factor: 3}/' "$1"
}
q() { sqlite3 -readonly "$db" "$1" 2>/dev/null || echo 0; }
snapshot() {
  python3 - "$db" <<'P'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for r in db.execute("SELECT s.id, s.trial_id, s.seq, s.resource_from, s.resource_to, "
                    "(SELECT group_concat(m.name || '=' || m.value || '@' || m.resource) FROM metrics m "
                    " WHERE m.segment_id = s.id) FROM segments s WHERE s.status = 'completed' ORDER BY s.id"):
    print(r)
P
}

serve_start --devices "$work/devices.yaml"
for s in a1 a2; do spec "$work/$s.yaml" "rec-$s"; as "$U1" "$R" submit "$s.yaml" >/dev/null || fail "submit $s"; done
for s in b1 b2; do spec "$work/$s.yaml" "rec-$s"; as "$U2" "$R" submit "$s.yaml" >/dev/null || fail "submit $s"; done

kill_at() { # N: kill -9 once N segments have completed and some run
  local n=$1 t0=$SECONDS
  until [ "$(q "SELECT count(*) FROM segments WHERE status='completed'")" -ge "$n" ] &&
        [ "$(q "SELECT count(*) FROM segments WHERE status='running' AND pid > 0")" -gt 0 ]; do
    [ "$(q "SELECT count(*) FROM experiments WHERE status='running'")" != 0 ] ||
      fail "kill at $n: every experiment ended first"
    kill -0 "$spid" 2>/dev/null || fail "kill at $n: relish serve exited before it"
    [ $((SECONDS - t0)) -lt 120 ] || fail "kill at $n: not reached in 120 s"
    sleep 0.05
  done
  kill -9 "$spid"
  wait "$spid" 2>/dev/null || true
  spid=
  python3 -c 'import sqlite3,sys
for p,s in sqlite3.connect(sys.argv[1]).execute("SELECT pid, pid_start_time FROM segments WHERE status=\x27running\x27 AND pid > 0"): print(p, s)' "$db" >"$work/running"
  [ -s "$work/running" ] || fail "kill at $n: nothing was running"
  snapshot >"$work/before"
}

alive_ours() { # any process the killed service started still alive?
  local pid st now state
  while read -r pid st; do
    [ -r "/proc/$pid/stat" ] || continue
    read -r now state < <(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | awk '{print $20, $1}') || continue
    [ "$now" = "$st" ] && [ "$state" != Z ] && return 0
  done <"$work/running"
  return 1
}

resumed_count() { grep -c 'event=serve.resumed' "$work/serve.log" || true; }

restart() {
  local before
  before=$(resumed_count)
  serve_start --devices "$work/devices.yaml"
  [ "$(resumed_count)" -gt "$before" ] || fail "the restarted service did not report its resume"
  grep 'event=serve.resumed' "$work/serve.log" | tail -1 | grep -q 'experiments=[1-9]' \
    || fail "nothing was resumed: $(grep 'event=serve.resume' "$work/serve.log" | tail -3)"
  # started after the resume: the old processes are gone by now
  ! alive_ours || fail "a process of the killed service is still alive after the restart"
  snapshot >"$work/after"
  while IFS= read -r line; do
    grep -qxF "$line" "$work/after" || fail "completed segment changed or lost: $line"
  done <"$work/before"
}

kill_at 2
restart
kill_at 12
restart
kill_at 22
restart

done_all() { [ "$(q "SELECT count(*) FROM experiments WHERE status != 'done'")" = 0 ]; }
wait_for 300 done_all
serve_stop

python3 - "$db" <<'P' || fail "after three kills"
import collections, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
def check(c, w):
    if not c:
        sys.exit("FAIL: " + w)
st = dict(db.execute("SELECT status, count(*) FROM trials GROUP BY status").fetchall())
check(sum(st.values()) == 32 and set(st) <= {"completed", "stopped"}, "trials %s" % st)
check(db.execute("SELECT count(*) FROM segments WHERE status IN ('planned','running')").fetchone()[0] == 0,
      "segments left planned or running")
lost = db.execute("SELECT count(*) FROM segments WHERE status = 'lost'").fetchone()[0]
check(lost >= 3, "only %d segments were lost to three kills" % lost)
# each (trial, metric, epoch) once across completed segments
rows = db.execute("SELECT m.trial_id, m.name, m.resource, count(*) FROM metrics m "
                  "JOIN segments s ON s.id = m.segment_id WHERE s.status = 'completed' "
                  "GROUP BY m.trial_id, m.name, m.resource HAVING count(*) > 1").fetchall()
check(not rows, "metrics doubled: %s" % rows[:5])
# nothing stored twice by one segment
rows = db.execute("SELECT segment_id, name, resource, count(*) FROM metrics "
                  "GROUP BY segment_id, name, resource HAVING count(*) > 1").fetchall()
check(not rows, "a segment's metric stored twice: %s" % rows[:5])
# a trial's objective at every epoch it reached: from its completed
# segments, or from the segment a kill interrupted after it had reported
# (and checkpointed) them, which the re-run then does not train again
for tid, done, status in db.execute("SELECT id, resource_done, status FROM trials"):
    got = {r for (r,) in db.execute(
        "SELECT m.resource FROM metrics m JOIN segments s ON s.id = m.segment_id "
        "WHERE m.trial_id = ? AND m.name = 'accuracy' AND s.status IN ('completed', 'lost')",
        (tid,))}
    want = set(range(1, int(done) + 1))
    check(got == want, "trial %d (%s, reached %s): epochs %s" % (tid, status, done, sorted(got)))
# every metric row belongs to a segment of its own trial
check(db.execute("SELECT count(*) FROM metrics m JOIN segments s ON s.id = m.segment_id "
                 "WHERE s.trial_id != m.trial_id").fetchone()[0] == 0, "metric rows on foreign segments")
print("recover: %d trials final, %d segments lost to the kills and re-run" % (sum(st.values()), lost))
P
for u in "$U1" "$U2"; do
  pgrep -u "$u" >/dev/null && fail "processes of $u are left: $(pgrep -a -u "$u")"
done
echo "test_serve_recover: ok"
