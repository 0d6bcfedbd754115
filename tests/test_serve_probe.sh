#!/usr/bin/env bash
# test_serve_probe.sh - a CPU user's first experiments under relish serve
# (issue 30, item 8), on a host of 8 GiB (a devices file):
#   broken  a Python trial whose import fails (no metric line, a peak of
#           ~10 MiB): its first three trials fail and it stops failing fast;
#   fixed   the same command, the script fixed (it holds ~120 MiB): its
#           trials are no kin of the failed starts' 10 MiB (those are no
#           measurement), so its first segment is the host's probe (2 GiB,
#           a quarter of the host), never stopped over a reservation made
#           from the failed starts (it was: a family estimate of 25 MiB, a
#           95 MiB reservation, "oom on host" at 111 MiB);
#   beside  another experiment's first segment runs beside fixed's probe:
#           fixed's trial waits for beside's to have started (an event, up
#           to 60 s), which a probe holding the whole host prevented;
#   greedy  a trial over its declared 64 MiB is stopped by relish and said
#           to be over its reservation, not out of memory.
set -euo pipefail
. "$RELISH_SRC/tests/support/serve-lib.sh"
serve_lib_init probe
serve_users 1
PY=/usr/bin/python3
printf 'host:\n  memory: 8GiB\n  cpus: 2\n' >"$work/devices.yaml"
mkdir -p "$work/flags"
chmod 1777 "$work/flags"

# The trial script, first broken (a module that does not exist).
cat >"$work/train.py.new" <<'T'
import json, os, sys
import relish_no_such_module  # the user's typo
T
chmod 644 "$work/train.py.new"
mv -f "$work/train.py.new" "$work/train.py"

spec() { # NAME TRIALS COMMAND-JSON RESOURCES
  cat >"$work/$1.yaml" <<S
name: $1
objective: {metric: acc, mode: max}
search: {algorithm: random, seed: 3, max_trials: $2, max_concurrent: 2,
         space: {lr: {type: uniform, low: 0.001, high: 0.1}}}
schedule: {algorithm: none, resource: epoch, max: 2, segment: 1}
trial:
  command: $3
  resources: $4
  retries: 0
S
  chmod 644 "$work/$1.yaml"
}
spec broken 6 "[\"$PY\", \"$work/train.py\", \"{lr}\"]" "{cpus: 0.5}"
serve_start --devices "$work/devices.yaml"

rc=0
timeout 120 env RELISH_SERVER="unix:$sock" setpriv --reuid="$U1" --regid="$(id -g "$U1")" --init-groups \
  "$R" submit "$work/broken.yaml" --follow >"$work/broken.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "broken: submit --follow exit $rc, want 1: $(tail -5 "$work/broken.out")"
grep -q 'ModuleNotFoundError' "$work/broken.out" || fail "broken: no import error shown: $(cat "$work/broken.out")"

# Fixed: holds ~120 MiB, and in its first segment waits for beside.
cat >"$work/train.py.new" <<T
import os, sys, time
hold = bytearray(120 << 20)
for i in range(0, len(hold), 4096):
    hold[i] = 1
a, b = int(float(os.environ["RELISH_RESOURCE_FROM"])), int(float(os.environ["RELISH_RESOURCE_TO"]))
if a == 0:
    for _ in range(1200):
        if os.path.exists("$work/flags/beside"):
            break
        time.sleep(0.05)
    else:
        sys.exit("beside never started while this probe ran")
time.sleep(0.5)  # (the sampler's period is 0.2 s: most segments are measured)
for e in range(a + 1, b + 1):
    print("RELISH epoch=%d acc=%.4f" % (e, 0.5 + 0.1 * e), flush=True)
T
chmod 644 "$work/train.py.new"
mv -f "$work/train.py.new" "$work/train.py"
spec fixed 2 "[\"$PY\", \"$work/train.py\", \"{lr}\"]" "{cpus: 0.5}"
cat >"$work/beside.sh" <<T
#!/bin/sh
: >"$work/flags/beside"
echo "RELISH epoch=\$RELISH_RESOURCE_TO acc=0.7"
T
chmod 755 "$work/beside.sh"
spec beside 1 "[\"$work/beside.sh\", \"{lr}\"]" "{cpus: 0.5}"
as "$U1" "$R" submit "$work/fixed.yaml" >/dev/null || fail "submit fixed"
as "$U1" "$R" submit "$work/beside.yaml" >/dev/null || fail "submit beside"

ended() { # NAME: the experiment has ended
  as "$U1" "$R" status --json | "$PY" -c '
import json, sys
e = [x for x in json.load(sys.stdin) if x["experiment"] == sys.argv[1]]
sys.exit(0 if e and e[0]["status"] != "running" else 1)' "$1"
}
wait_for 180 ended fixed
wait_for 60 ended beside

# Greedy: declared 64 MiB, holds ~200 MiB.
cat >"$work/greedy.py" <<'T'
import time
hold = bytearray(200 << 20)
for i in range(0, len(hold), 4096):
    hold[i] = 1
time.sleep(30)
print("RELISH epoch=1 acc=0.1", flush=True)
T
chmod 644 "$work/greedy.py"
spec greedy 1 "[\"$PY\", \"$work/greedy.py\", \"{lr}\"]" "{memory: 64MiB, cpus: 0.5}"
as "$U1" "$R" submit "$work/greedy.yaml" >/dev/null || fail "submit greedy"
greedy_stopped() {
  "$PY" - "$work/state/relish.db" <<'P'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n = db.execute("SELECT count(*) FROM events e JOIN experiments x ON x.id = e.experiment_id"
               " WHERE x.name = 'greedy' AND e.kind = 'segment.over_reservation'").fetchone()[0]
sys.exit(0 if n else 1)
P
}
wait_for 120 greedy_stopped
as "$U1" "$R" cancel greedy >/dev/null || fail "cancel greedy"

"$PY" - "$work/state/relish.db" <<'P' || fail "the store says otherwise"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
def check(c, w):
    if not c:
        sys.exit("FAIL: " + w)
def segs(name):
    return db.execute(
        "SELECT t.id, g.seq, g.status, g.basis, g.mem_reserved_mib, g.peak_mem_mib, g.message"
        " FROM segments g JOIN trials t ON t.id = g.trial_id JOIN experiments x ON x.id = t.experiment_id"
        " WHERE x.name = ? ORDER BY g.id", (name,)).fetchall()
st = dict(db.execute("SELECT name, status FROM experiments").fetchall())
check(st["broken"] == "failed", "broken: %s" % st)
b = segs("broken")
check(len([s for s in b if s[2] == "failed"]) == 3 and all(s[2] in ("failed", "cancelled") for s in b),
      "broken's segments %s" % (b,))
check(all(s[5] is None or s[5] < 64 for s in b), "broken's peaks %s" % (b,))
f = segs("fixed")
trials = db.execute("SELECT t.status FROM trials t JOIN experiments x ON x.id = t.experiment_id"
                    " WHERE x.name = 'fixed'").fetchall()
check(st["fixed"] == "done" and trials == [("completed",), ("completed",)],
      "fixed: %s, trials %s, segments %s" % (st["fixed"], trials, f))
check(all(s[2] == "completed" for s in f), "fixed: a segment did not complete: %s" % (f,))
# The first segment of each trial: a bounded first guess, never the whole
# 8 GiB host nor the failed starts' few MiB: the service's trial_memory
# (2 GiB, a hint: x1.2) where the spec names no memory, else the host's
# probe (a quarter of the host, as under relish run).
first = [s for s in f if s[1] == 0]
check(len(first) == 2 and all((s[3] == "probe" and s[4] == 2048) or (s[3] == "hint" and 2048 <= s[4] <= 2460)
                              for s in first),
      "fixed's first segments are not a bounded first guess: %s" % (first,))
# The second: its own measured peak plus headroom, or the probe again when
# the first ended before the sampler saw it (no peak: nothing learnt).
second = [s for s in f if s[1] == 1]
check(all((s[3] == "profile" and s[4] >= s[5]) or (s[3], s[4]) in {(x[3], x[4]) for x in first} for s in second),
      "fixed's second segments %s" % (second,))
check(st["beside"] == "done", "beside: %s" % st)
g = segs("greedy")
check(g and g[0][2] == "over_reservation" and g[0][6].startswith("over its memory reservation (reserved 77 MiB, peak ")
      and "relish stopped it at " in g[0][6]
      and "out of memory" not in g[0][6], "greedy: %s" % (g,))
for kind, in db.execute("SELECT DISTINCT kind FROM events"):
    check(kind != "segment.oom", "an out-of-memory event on an 8 GiB host: %s" % kind)
P
! grep -q 'oom on host' "$work/serve.log" || fail "the service log says oom: $(grep 'oom on host' "$work/serve.log")"
grep -q 'greedy: trial [0-9]* segment 0-1 over its reservation on host (reserved 77 MiB' "$work/serve.log" ||
  fail "the service log does not say greedy was over its reservation: $(grep greedy "$work/serve.log" | tail -3)"
serve_stop
echo "ok: failed starts are no measurement, the host's probe runs beside others, over a reservation is said so"
