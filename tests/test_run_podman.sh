#!/usr/bin/env bash
# test_run_podman.sh - `relish run` with trial.executor: podman, real
# containers (podman + runc, scripts/containers.conf through CONTAINERS_CONF,
# the tiny image of scripts/podman-image.sh with the host's /usr and the
# build folder mounted read-only).  Cases:
#   ok       the C trial (ASHA, 4 trials) runs to completion in containers:
#            exit 0, a best trial, every segment ran in a named container,
#            none is left afterwards;
#   oom      a trial touching 100 MiB under a 64 MiB --memory is killed
#            (exit 137), classified oom in the store and re-placed with a
#            larger reservation (margin 1.0: 128 MiB), where it completes;
#   cancel   SIGINT to relish mid-run: segments recorded cancelled, no
#            container left;
#   crash    kill -9 relish mid-run: its containers outlive it; the same
#            command again finds them (by owner label): the one still
#            running is adopted (its segment completes in the same
#            container, no lost row, each metric stored once), the one
#            stopped meanwhile is removed and its segment re-run; it
#            finishes, leaves nothing; no trial lost or failed;
#   noimage  a missing image: exit 1 at once with the image named, no trial
#            created;
#   runtime  a mount whose host path does not exist: podman fails (125) on
#            the first segments, which are recorded failed with a
#            "container runtime:" reason; no trial failed and no retry
#            used; the experiment stops (failed) and relish exits 1;
#   priv     least privilege as the trial sees it (/proc/self/status): no
#            capability, no_new_privs, not root, a read-only root; and with
#            trial.privileges (NET_RAW, root) exactly that comes back, and
#            relish validate lists it.
#
# RELISH_TEST_ENGINE=docker runs the same cases with docker (a daemon must
# answer: tests/test_run_docker.sh starts a private one).
set -euo pipefail
: "${RELISH:?path of the relish binary}" "${RELISH_BUILD:?build directory}" "${RELISH_SRC:?source dir}"
ENGINE=${RELISH_TEST_ENGINE:-podman}
PY=/usr/bin/python3
export CONTAINERS_CONF="$RELISH_SRC/scripts/containers.conf"
"$RELISH_SRC/tests/support/nested-skip.sh" "$ENGINE" || exit $?
command -v "$ENGINE" >/dev/null || { echo "FAIL: $ENGINE not installed (scripts/deps.sh test)" >&2; exit 1; }
PODMAN=$ENGINE "$RELISH_SRC/scripts/podman-image.sh"
rm_now=(rm -f -t 0)
[ "$ENGINE" = docker ] && rm_now=(rm -f) # docker rm has no -t
work=$(mktemp -d "/tmp/relish-test-$ENGINE-XXXXXX")
tag=$$
names="ok$tag oom$tag cancel$tag crash$tag noimage$tag runtime$tag priv$tag grant$tag"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  for n in $names; do
    "$ENGINE" ps -aq --filter "label=relish.experiment=$n" | xargs -r "$ENGINE" "${rm_now[@]}" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset RELISH_DEVICES CUDA_MPS_PIPE_DIRECTORY
printf 'host:\n  memory: 4GiB\n  cpus: 4\n' >"$work/devices.yaml"
left() { "$ENGINE" ps -aq --filter "label=relish.experiment=$1" | wc -l; }
running() { "$ENGINE" ps -q --filter "label=relish.experiment=$1" --filter status=running | wc -l; }

# spec NAME SEARCH SCHEDULE EXTRA_TRIAL_ARGS [IMAGE] [MOUNTS] [MORE_TRIAL_KEYS]
spec() {
  cat >"$work/$1.yaml" <<S
name: $1
objective: {metric: accuracy, mode: max}
search: $2
schedule: $3
trial:
  command: ["$RELISH_BUILD/ctrial", "--x", "{x}", "--y", "{y}"$4]
  executor: $ENGINE
  image: ${5:-localhost/relish-host}
  mounts: [${6:-"/usr:/usr:ro", "$RELISH_BUILD:$RELISH_BUILD:ro"}]
  env: {ASAN_OPTIONS: "detect_leaks=0"}
  resources: {memory: 64MiB, cpus: 0.5}
${7:-}
sharing: {policy: pack, memory_margin: 1.0}
S
}
space='{x: {type: uniform, low: 0.0, high: 1.0}, y: {type: uniform, low: -5.0, high: 5.0}}'
run() { "$RELISH" run "$work/$1.yaml" --db "$work/$1.db" --devices "$work/devices.yaml" "${@:2}"; }

# ---- ok ------------------------------------------------------------------------
spec "ok$tag" "{algorithm: random, seed: 3, max_trials: 4, max_concurrent: 2, space: $space}" \
  "{algorithm: asha, resource: epoch, min: 1, max: 9, reduction_factor: 3}" ', "--sleep-ms", "20"'
run "ok$tag" >"$work/ok.out" 2>"$work/ok.err" || fail "ok: exit $?: $(tail -5 "$work/ok.err")"
grep -q "^ok$tag: trial " "$work/ok.out" || fail "ok: no best: $(cat "$work/ok.out")"
[ "$(left "ok$tag")" = 0 ] || fail "ok: containers left: $("$ENGINE" ps -a --filter label=relish.experiment=ok$tag)"
"$PY" - "$work/ok$tag.db" "ok$tag" <<'P'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
segs = db.execute("SELECT status, handle, exit_code FROM segments").fetchall()
# ASHA, eta 3, rungs 1, 3, 9 over 4 trials: 4 + 1 + 1 segments at least.
if len(segs) < 6 or any(s[0] != "completed" or s[2] != 0 for s in segs):
    sys.exit("FAIL: ok: segments %s" % segs)
if any(not (s[1] or "").startswith("relish-%s-t" % sys.argv[2]) for s in segs):
    sys.exit("FAIL: ok: container names %s" % [s[1] for s in segs])
st = sorted(r[0] for r in db.execute("SELECT status FROM trials"))
if len(st) != 4 or any(s not in ("completed", "stopped") for s in st):
    sys.exit("FAIL: ok: trials %s" % st)
P

# ---- oom -----------------------------------------------------------------------
spec "oom$tag" "{algorithm: random, seed: 1, max_trials: 1, space: $space}" \
  "{algorithm: none, resource: epoch, max: 1}" ', "--alloc-mb", "100", "--sleep-ms", "300"'
run "oom$tag" >"$work/oom.out" 2>"$work/oom.err" || fail "oom: exit $?: $(tail -5 "$work/oom.err")"
[ "$(left "oom$tag")" = 0 ] || fail "oom: containers left"
"$PY" - "$work/oom$tag.db" <<'P'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
s = db.execute("SELECT status, exit_code, mem_reserved_mib, basis, message FROM segments ORDER BY seq").fetchall()
# Killed at its 64 MiB limit (exit 137: --memory, relish's limit from its
# reservation, so stored over_reservation, not oom: issue 30, item 8), then
# re-placed with the reservation doubled (margin 1.0) and completed.
if len(s) != 2 or s[0][:3] != ("over_reservation", 137, 64) or "memory limit (64 MiB)" not in s[0][4]:
    sys.exit("FAIL: oom: first segment %s" % (s,))
if s[1][0] != "completed" or s[1][2] < 128 or s[1][3] != "oom":
    sys.exit("FAIL: oom: second segment %s" % (s,))
t = db.execute("SELECT status FROM trials").fetchall()
if t != [("completed",)]:
    sys.exit("FAIL: oom: trial %s" % (t,))
P

# ---- cancel and crash: two trials of 3 epochs x 1.5 s, one segment each ---------
wait_running() { # NAME COUNT: until COUNT containers of NAME run (20 s at most)
  for _ in $(seq 200); do [ "$(running "$1")" -ge "$2" ] && return 0; sleep 0.1; done
  fail "$1: $2 containers never ran: $("$ENGINE" ps -a --filter label=relish.experiment=$1)"
}
for n in cancel crash; do
  spec "$n$tag" "{algorithm: random, seed: 2, max_trials: 2, max_concurrent: 2, space: $space}" \
    "{algorithm: none, resource: epoch, max: 3}" ', "--sleep-ms", "1500"'
done
# Started directly (not through run()) so that $! is relish itself.
"$RELISH" run "$work/cancel$tag.yaml" --db "$work/cancel$tag.db" --devices "$work/devices.yaml" \
  >"$work/cancel.out" 2>"$work/cancel.err" &
pids+=($!)
wait_running "cancel$tag" 2
kill -INT "${pids[-1]}"
rc=0
wait "${pids[-1]}" || rc=$?
[ "$rc" = 130 ] || fail "cancel: relish exited $rc after SIGINT, expected 130: $(tail -3 "$work/cancel.err")"
[ "$(left "cancel$tag")" = 0 ] || fail "cancel: containers left: $("$ENGINE" ps -a --filter label=relish.experiment=cancel$tag)"
n=$(sqlite3 "$work/cancel$tag.db" "SELECT count(*) FROM segments WHERE status='cancelled'")
[ "$n" = 2 ] || fail "cancel: $n segments cancelled, expected 2"

"$RELISH" run "$work/crash$tag.yaml" --db "$work/crash$tag.db" --devices "$work/devices.yaml" \
  >"$work/crash1.out" 2>"$work/crash1.err" &
pids+=($!)
wait_running "crash$tag" 2
# Killed once both trials stored epoch 1 (of 3): adoption then reads lines
# already stored again.
for _ in $(seq 100); do
  [ "$(sqlite3 "$work/crash$tag.db" "SELECT count(DISTINCT trial_id) FROM metrics" 2>/dev/null || echo 0)" -ge 2 ] && break
  sleep 0.1
done
kill -9 "${pids[-1]}"
wait "${pids[-1]}" 2>/dev/null || true
sleep 0.3
[ "$(running "crash$tag")" -ge 1 ] || fail "crash: the containers died with relish (nothing to reconcile)"
# One of the two is stopped while no relish runs: exited, it is removed and
# its segment re-run; the other, still running, is adopted.
"$ENGINE" stop -t 5 "$("$ENGINE" ps -q --filter "label=relish.experiment=crash$tag" | head -1)" >/dev/null
run "crash$tag" >"$work/crash2.out" 2>"$work/crash2.err" || fail "crash: resume exit $?: $(tail -5 "$work/crash2.err")"
n=$(grep -c "was still running and was adopted" "$work/crash2.err" || true)
[ "$n" = 1 ] || fail "crash: $n containers adopted, expected 1: $(head -8 "$work/crash2.err")"
grep -q "removed 1 container left by an earlier relish (0 still running)" "$work/crash2.err" ||
  fail "crash: no reconcile message: $(head -5 "$work/crash2.err")"
grep -q "1 to re-run from their checkpoint, 1 running in adopted containers" "$work/crash2.err" ||
  fail "crash: no resume message: $(head -5 "$work/crash2.err")"
grep -q "^crash$tag: trial " "$work/crash2.out" || fail "crash: no best"
[ "$(left "crash$tag")" = 0 ] || fail "crash: containers left: $("$ENGINE" ps -a --filter label=relish.experiment=crash$tag)"
"$PY" - "$work/crash$tag.db" <<'P'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
s = db.execute("SELECT trial_id, status, exit_code, message FROM segments ORDER BY id").fetchall()
ev = db.execute("SELECT kind, trial_id, segment_id FROM events "
                "WHERE kind IN ('segment.adopted', 'segment.lost')").fetchall()
if sorted(k for (k, _, _) in ev) != ["segment.adopted", "segment.lost"]:
    sys.exit("FAIL: crash: events %s" % ev)
adopted = [t for (k, t, _) in ev if k == "segment.adopted"][0]
stopped = [t for (k, t, _) in ev if k == "segment.lost"][0]
# The adopted trial's one segment (0-3) ran on in its container across the
# crash: completed, never lost or re-run.  The stopped one: lost, then
# re-run from its checkpoint to completion.
a = [r[1:3] for r in s if r[0] == adopted]
b = [r[1:] for r in s if r[0] == stopped]
if a != [("completed", 0)]:
    sys.exit("FAIL: crash: adopted trial's segments %s" % (a,))
if len(b) != 2 or b[0][0] != "lost" or "had stopped and was removed" not in b[0][2] \
        or b[1][:2] != ("completed", 0):
    sys.exit("FAIL: crash: stopped trial's segments %s" % (b,))
t = db.execute("SELECT status FROM trials").fetchall()
if t != [("completed",), ("completed",)]:
    sys.exit("FAIL: crash: trials %s" % (t,))
# Epochs 1..3 of the adopted trial stored once each: the lines read again
# from the container's start are not stored twice.
m = db.execute("SELECT resource, count(*) FROM metrics WHERE name='accuracy' AND trial_id=? "
               "GROUP BY resource ORDER BY resource", (adopted,)).fetchall()
if m != [(1.0, 1), (2.0, 1), (3.0, 1)]:
    sys.exit("FAIL: crash: adopted trial's metrics %s" % (m,))
P

# ---- noimage -------------------------------------------------------------------
spec "noimage$tag" "{algorithm: random, max_trials: 2, space: $space}" \
  "{algorithm: none, resource: epoch, max: 1}" "" "localhost/relish-no-such-image-$tag"
rc=0
run "noimage$tag" >"$work/noimage.out" 2>"$work/noimage.err" || rc=$?
[ "$rc" = 1 ] || fail "noimage: exit $rc, expected 1: $(cat "$work/noimage.err")"
grep -q "container image localhost/relish-no-such-image-$tag not found" "$work/noimage.err" ||
  fail "noimage: message: $(cat "$work/noimage.err")"
n=$(sqlite3 "$work/noimage$tag.db" "SELECT count(*) FROM trials")
[ "$n" = 0 ] || fail "noimage: $n trials created"

# ---- runtime failure -------------------------------------------------------------
spec "runtime$tag" "{algorithm: random, max_trials: 6, max_concurrent: 1, space: $space}" \
  "{algorithm: none, resource: epoch, max: 1}" "" "" \
  "\"/usr:/usr:ro\", \"$RELISH_BUILD:$RELISH_BUILD:ro\", \"$work/no-such-dir:/data:ro\"" "  retries: 3"
rc=0
run "runtime$tag" >"$work/runtime.out" 2>"$work/runtime.err" || rc=$?
[ "$rc" = 1 ] || fail "runtime: exit $rc, expected 1: $(tail -5 "$work/runtime.err")"
grep -q "runtime$tag: container runtime: .*nothing more was launched" "$work/runtime.err" ||
  fail "runtime: message: $(tail -5 "$work/runtime.err")"
[ "$(left "runtime$tag")" = 0 ] || fail "runtime: containers left"
"$PY" - "$work/runtime$tag.db" <<'P'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
s = db.execute("SELECT status, exit_code, message FROM segments").fetchall()
# max_concurrent 1: the first segment fails, nothing more is launched,
# and none of the 3 retries is spent on it.
if len(s) != 1 or s[0][:2] != ("failed", 125) or not s[0][2].startswith("container runtime: "):
    sys.exit("FAIL: runtime: segments %s" % (s,))
if db.execute("SELECT count(*) FROM trials WHERE status='failed'").fetchone()[0]:
    sys.exit("FAIL: runtime: a trial was failed for the runtime's fault")
if db.execute("SELECT status FROM experiments").fetchall() != [("failed",)]:
    sys.exit("FAIL: runtime: experiment %s" % db.execute("SELECT status FROM experiments").fetchall())
ev = [k for (k,) in db.execute("SELECT kind FROM events")]
if "segment.runtime_failed" not in ev or "experiment.failed" not in ev:
    sys.exit("FAIL: runtime: events %s" % ev)
P
# ---- privileges ---------------------------------------------------------------------
cat >"$work/probe.sh" <<'T'
# What the trial may do, in its own words (log lines), then its metric.
grep -E '^(Uid|CapEff|NoNewPrivs):' /proc/self/status
sed -n 's|^[^ ]* / [^ ]* \(..\).*|ROOT=\1|p' /proc/self/mounts
echo "RELISH epoch=1 ok=1"
T
privspec() { # NAME [PRIVILEGES]
  cat >"$work/$1.yaml" <<S
name: $1
objective: {metric: ok, mode: max}
search: {algorithm: grid, space: {x: {type: choice, values: [1]}}}
trial:
  command: ["/bin/sh", "$work/probe.sh"]
  executor: $ENGINE
  image: localhost/relish-host
  mounts: ["/usr:/usr:ro", "$work/probe.sh:$work/probe.sh:ro"]
  resources: {memory: 64MiB, cpus: 0.5}
${2:-}
S
}
privspec "priv$tag"
run "priv$tag" >"$work/priv.out" 2>"$work/priv.err" || fail "priv: exit $?: $(tail -5 "$work/priv.err")"
log=$(sqlite3 "$work/priv$tag.db" "SELECT log_path FROM segments")
grep -q $'^CapEff:\t0000000000000000$' "$log" && grep -q $'^NoNewPrivs:\t1$' "$log" &&
  ! grep -q $'^Uid:\t0\t' "$log" && grep -q '^ROOT=ro$' "$log" ||
  fail "priv: the trial had more than least privilege: $(cat "$log")"
privspec "grant$tag" "  privileges: {capabilities: [net_raw], user: root}"
"$RELISH" validate "$work/grant$tag.yaml" >"$work/grant.validate" 2>&1 || fail "grant: validate: $(cat "$work/grant.validate")"
grep -q 'trial.privileges.capabilities: NET_RAW' "$work/grant.validate" &&
  grep -q 'trial.privileges.user: 0:0' "$work/grant.validate" ||
  fail "grant: validate does not list the grants: $(cat "$work/grant.validate")"
run "grant$tag" >"$work/grant.out" 2>"$work/grant.err" || fail "grant: exit $?: $(tail -5 "$work/grant.err")"
log=$(sqlite3 "$work/grant$tag.db" "SELECT log_path FROM segments")
grep -q $'^CapEff:\t0000000000002000$' "$log" && grep -q $'^Uid:\t0\t' "$log" ||
  fail "grant: NET_RAW and root did not arrive: $(cat "$log")"
[ "$(left "priv$tag")$(left "grant$tag")" = 00 ] || fail "priv: containers left"

echo "test_run_podman ($ENGINE): ok"
