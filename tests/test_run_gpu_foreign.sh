#!/usr/bin/env bash
# test_run_gpu_foreign.sh - a GPU relish does not own alone (issue 21), on
# NVML stand-in GPUs whose per-process memory comes from a state file
# (tests/support/fake_gpus.sh).  Trials are tests/support/gpu_share_trial.sh,
# which runs out of memory like CUDA when the device is full.
#   two runs   two `relish run` on different databases against one 4 GiB
#              GPU, each trial needing 2600 MiB (more than half of it): each
#              sees the other's trials as others' memory, so both complete
#              with no trial failed, no segment blamed for running out of
#              memory alone, and one waited (segment.waiting events);
#   helper     a process relish does not own holds 7000 of an 8 GiB GPU for
#              a while: the segment waits (event, progress line), then runs;
#              with sharing.foreign_wait shorter than the hold the trial
#              fails saying why and the run ends;
#   avoid      with a small foreign process on GPU 0 of two: `share` places
#              beside it (it fits), `avoid` uses GPU 1.
#   serve      relish serve with `foreign: avoid` in its config: a spec that
#              says `share` is placed on GPU 1 all the same (the service's
#              setting is the machine's); the start line says foreign=avoid.
set -euo pipefail
. "$RELISH_SRC/tests/support/fake_gpus.sh" gpu-foreign
trial="$RELISH_SRC/tests/support/gpu_share_trial.sh"
hold="$RELISH_SRC/tests/support/gpu_foreign_hold.sh"
helpers=()
cleanup() {
	for p in "${helpers[@]}"; do kill "$p" 2>/dev/null || true; done
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

spec() { # NAME TOTAL_MIB TRIALS EXTRA_SHARING RESOURCES [JOB]
	cat <<S
name: $1
objective: {metric: accuracy, mode: max}
search: {algorithm: random, seed: 1, max_trials: $3, max_concurrent: $3, space: {x: {type: uniform, low: 0, high: 1}}}
schedule: {algorithm: none, resource: epoch, max: 1}
trial:
  command: ["/bin/sh", "$trial", "${6:-2600:2}", "$work/state", "$2"]
  resources: $5
  retries: 0
sharing: {policy: relish$4}
S
}

nvml() { # TOTAL_MIB N_GPUS
	{
		echo "driver 550.54.15"
		for i in $(seq 0 $(($2 - 1))); do echo "device GPU-fake-$i $1 NVIDIA Stand-in"; done
		echo "state $work/state"
	} >"$work/nvml"
	: >"$work/state"
}

# ---- two relish runs, one 4 GiB GPU ---------------------------------------------
nvml 4096 1
# A declares its need (relish reserves 2600 x 1.2 = 3120 MiB); B does not
# (its first segment runs alone to be measured, on what A leaves free).
spec two-a 4096 3 "" "{gpus: 1, gpu_memory: 2600MiB, cpus: 0.1}" >"$work/a.yaml"
spec two-b 4096 3 "" "{gpus: 1, cpus: 0.1}" >"$work/b.yaml"
timeout 180 "$RELISH" run "$work/a.yaml" --db "$work/a.db" >"$work/a.out" 2>"$work/a.err" &
pa=$!
timeout 180 "$RELISH" run "$work/b.yaml" --db "$work/b.db" >"$work/b.out" 2>"$work/b.err" &
pb=$!
set +e
wait $pa; ra=$?
wait $pb; rb=$?
set -e
[ $ra -eq 0 ] || fail "two runs: A exited $ra: $(tail -5 "$work/a.err")"
[ $rb -eq 0 ] || fail "two runs: B exited $rb: $(tail -5 "$work/b.err")"
"$PY" - "$work/a.db" "$work/b.db" <<'P'
import sqlite3, sys
waits = 0
for path in sys.argv[1:]:
    db = sqlite3.connect(path)
    t = db.execute("SELECT status, error FROM trials").fetchall()
    if len(t) != 3 or any(s != "completed" for s, _ in t):
        sys.exit("FAIL: two runs: %s trials %s" % (path, t))
    segs = db.execute("SELECT status, mem_reserved_mib, message FROM segments").fetchall()
    for status, res, msg in segs:
        if status not in ("completed", "oom"):
            sys.exit("FAIL: two runs: %s segment %s" % (path, (status, res, msg)))
        # An out-of-memory here can only be beside the other run's trial:
        # never blamed as alone on an empty device.
        if status == "oom" and ("alone on an empty device" in (msg or "") or "others used" not in (msg or "")):
            sys.exit("FAIL: two runs: %s oom segment %s" % (path, (status, res, msg)))
    bad = db.execute("SELECT count(*) FROM events WHERE kind='trial.failed'").fetchone()[0]
    if bad:
        sys.exit("FAIL: two runs: %s has %d trial.failed events" % (path, bad))
    waits += db.execute("SELECT count(*) FROM events WHERE kind='segment.waiting'").fetchone()[0]
if waits < 1:
    sys.exit("FAIL: two runs: nobody waited")
P
grep -q "waiting for memory: .* MiB on GPU-fake-0 are used by processes relish does not own" \
  "$work/a.err" "$work/b.err" || fail "two runs: no waiting line: $(cat "$work/a.err" "$work/b.err")"

# ---- a helper holds most of a GPU --------------------------------------------------
nvml 8192 1
"$hold" 0 7000 4 "$work/state" >/dev/null 2>&1 &
helpers+=($!)
t_hold=$(date +%s.%N)
spec helper 8192 1 "" "{gpus: 1, gpu_memory: 3000MiB, cpus: 0.1}" "3000:1" >"$work/helper.yaml"
timeout 120 "$RELISH" run "$work/helper.yaml" --db "$work/helper.db" >"$work/helper.out" 2>"$work/helper.err" &
ph=$!
# While it waits, relish status says so, below its table.
seen=
for _ in $(seq 1 40); do
	if "$RELISH" status --db "$work/helper.db" >"$work/helper.status" 2>/dev/null &&
	   grep -q "^  helper: trial 1 waiting for memory: 7000 MiB on GPU-fake-0 are used by processes relish does not own; it needs 3600 MiB there (since " "$work/helper.status"; then
		seen=1
		break
	fi
	sleep 0.1
done
[ -n "$seen" ] || fail "helper: relish status never showed the wait: $(cat "$work/helper.status")"
"$RELISH" status --db "$work/helper.db" --json >"$work/helper.json"
wait $ph || fail "helper: relish run exited $?: $(tail -5 "$work/helper.err")"
"$RELISH" status --db "$work/helper.db" --json >"$work/helper.after.json"
"$PY" - "$work/helper.json" "$work/helper.after.json" <<'P'
import json, sys
during, after = (json.load(open(p))[0] for p in sys.argv[1:])
w = during["waiting"]
if during["status"] == "running" and (len(w) != 1 or w[0]["trial_id"] != 1 or "7000 MiB" not in w[0]["message"]):
    sys.exit("FAIL: helper: status --json while waiting: %s" % during)
if after["waiting"] != [] or after["status"] != "done":
    sys.exit("FAIL: helper: status --json after: %s" % after)
P
"$PY" - "$work/helper.db" "$t_hold" <<'P'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
t_hold = float(sys.argv[2])
t = db.execute("SELECT status FROM trials").fetchall()
s = db.execute("SELECT status, started_at, mem_reserved_mib FROM segments").fetchall()
ev = dict(db.execute("SELECT kind, message FROM events WHERE kind LIKE 'segment.wait%'").fetchall())
if t != [("completed",)] or len(s) != 1 or s[0][0] != "completed":
    sys.exit("FAIL: helper: trials %s segments %s" % (t, s))
if "segment.waiting" not in ev or "7000 MiB on GPU-fake-0" not in ev["segment.waiting"]:
    sys.exit("FAIL: helper: events %s" % ev)
if "segment.waited" not in ev:
    sys.exit("FAIL: helper: no end of the wait: %s" % ev)
# It ran only once the helper's 4 s were over.
if s[0][1] < t_hold + 3.5:
    sys.exit("FAIL: helper: started %.1f s after the helper" % (s[0][1] - t_hold))
P

# The same with a bound shorter than the hold: the trial fails, the run ends.
"$hold" 0 7000 30 "$work/state" >/dev/null 2>&1 &
helpers+=($!)
spec bounded 8192 1 ", foreign_wait: 2s" "{gpus: 1, gpu_memory: 3000MiB, cpus: 0.1}" "3000:1" >"$work/bounded.yaml"
set +e
timeout 60 "$RELISH" run "$work/bounded.yaml" --db "$work/bounded.db" >"$work/bounded.out" 2>"$work/bounded.err"
rc=$?
set -e
kill "${helpers[-1]}" 2>/dev/null || true
[ $rc -eq 1 ] || fail "bounded: exit $rc (expected 1): $(tail -5 "$work/bounded.err")"
"$PY" - "$work/bounded.db" <<'P'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
t = db.execute("SELECT status, error FROM trials").fetchall()
if len(t) != 1 or t[0][0] != "failed" or not t[0][1].startswith("waited 2 s for memory (sharing.foreign_wait is 2 s): 7000 MiB on GPU-fake-0"):
    sys.exit("FAIL: bounded: trials %s" % (t,))
if db.execute("SELECT count(*) FROM segments").fetchone()[0]:
    sys.exit("FAIL: bounded: a segment ran")
if db.execute("SELECT status FROM experiments").fetchone()[0] != "done":
    sys.exit("FAIL: bounded: experiment not done")
P

# ---- share or avoid a GPU others use -------------------------------------------------
nvml 8192 2
"$hold" 0 500 60 "$work/state" >/dev/null 2>&1 &
helpers+=($!)
for mode in share avoid; do
	spec "$mode" 8192 1 ", foreign: $mode" "{gpus: 1, gpu_memory: 3000MiB, cpus: 0.1}" "3000:1" >"$work/$mode.yaml"
	timeout 60 "$RELISH" run "$work/$mode.yaml" --db "$work/$mode.db" >"$work/$mode.out" 2>"$work/$mode.err" \
	  || fail "$mode: relish run exited $?: $(tail -5 "$work/$mode.err")"
done
"$PY" - "$work/share.db" "$work/avoid.db" <<'P'
import sqlite3, sys
got = []
for path in sys.argv[1:]:
    db = sqlite3.connect(path)
    got.append(db.execute("SELECT status, device FROM segments").fetchall())
if got != [[("completed", "GPU-fake-0")], [("completed", "GPU-fake-1")]]:
    sys.exit("FAIL: share/avoid: segments %s" % (got,))
P
# relish devices, with a database, shows the helper's memory as others' use.
"$RELISH" devices --db "$work/avoid.db" --json >"$work/devices.json"
"$PY" - "$work/devices.json" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))["devices"]
f = [x["memory_foreign_mib"] for x in d if x["is_gpu"]]
if f != [500, 0]:
    sys.exit("FAIL: relish devices: foreign %s" % f)
P
# ---- the service's setting --------------------------------------------------------------
"$hold" 0 500 60 "$work/state" >/dev/null 2>&1 &
helpers+=($!)
spec sshare 8192 1 ", foreign: share" "{gpus: 1, gpu_memory: 3000MiB, cpus: 0.1}" "3000:1" >"$work/sshare.yaml"
svc=$work/svc
printf 'foreign: avoids\n' >"$work/bad.yaml"
rc=0
"$RELISH" serve --state "$svc" --listen "unix:$svc/relish.sock" --config "$work/bad.yaml" >"$work/bad.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q 'bad.yaml:1:10: foreign: expected one of share, avoid, got "avoids"' "$work/bad.out" \
  || fail "serve: a bad foreign: value: exit $rc, $(cat "$work/bad.out")"
printf 'foreign: avoid\n' >"$work/serve.yaml"
"$RELISH" serve --state "$svc" --listen "unix:$svc/relish.sock" --config "$work/serve.yaml" >"$work/serve.log" 2>&1 &
spid=$!
helpers+=($spid)
for _ in $(seq 200); do
	curl -sf --max-time 5 --unix-socket "$svc/relish.sock" http://relish/api/v1/server >/dev/null 2>&1 && break
	kill -0 "$spid" 2>/dev/null || fail "serve: relish serve exited: $(tail -5 "$work/serve.log")"
	sleep 0.05
done
RELISH_SERVER="unix:$svc/relish.sock" timeout 60 "$RELISH" submit "$work/sshare.yaml" --follow \
  >"$work/submit.out" 2>&1 || fail "serve: relish submit --follow exited $?: $(tail -5 "$work/submit.out")"
kill -TERM "$spid"
for _ in $(seq 200); do kill -0 "$spid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$spid" 2>/dev/null && fail "serve: relish serve still running 10 s after SIGTERM"
"$PY" - "$svc/relish.db" <<'P'
import sqlite3, sys
got = sqlite3.connect(sys.argv[1]).execute("SELECT status, device FROM segments").fetchall()
if got != [("completed", "GPU-fake-1")]:
    sys.exit("FAIL: serve: foreign: avoid: segments %s" % (got,))
P
grep -q 'event=serve.started .*foreign=avoid' "$work/serve.log" || fail "serve: no foreign=avoid in the start line"
echo "test_run_gpu_foreign: ok"
