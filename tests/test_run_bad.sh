#!/usr/bin/env bash
# test_run_bad.sh - trials that misbehave, chosen by a parameter
# (tests/support/misbehave.sh maps it to ctrial's knobs), a random seed that
# draws each behaviour once, retries 0, an 8 s timeout: every bad trial is
# classified in the store as it should be, the good ones complete, the
# out-of-memory one is re-placed with a larger reservation until it fits,
# logs stay bounded, and the experiment finishes with exit 0.
set -euo pipefail
: "${RELISH:?path of the relish binary}" "${RELISH_BUILD:?build directory}" "${RELISH_SRC:?source dir}"
PY=/usr/bin/python3
work=$(mktemp -d /tmp/relish-test-bad-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset RELISH_DEVICES CUDA_MPS_PIPE_DIRECTORY
printf 'host:\n  memory: 2GiB\n  cpus: 4\n' >"$work/devices.yaml"

cat >"$work/bad.yaml" <<S
name: bad
objective: {metric: accuracy, mode: max}
search:
  algorithm: random   # seed 19 draws each of the 7 behaviours once
  seed: 19
  max_trials: 7
  max_concurrent: 7
  space:
    behaviour: {type: choice, values: [ok, exit1, segv, hang, oom, garbage, huge]}
schedule: {algorithm: none, resource: epoch, max: 2}
trial:
  command: ["/bin/sh", "$RELISH_SRC/tests/support/misbehave.sh", "{behaviour}", "$RELISH_BUILD/ctrial", "--x", "0.3", "--y", "2"]
  resources: {memory: 64MiB, cpus: 0.5}
  timeout: 8s   # 80 MiB of output (huge) takes ~1 s alone, several on a loaded machine
  retries: 0
sharing: {policy: pack}
S

"$RELISH" run "$work/bad.yaml" --db "$work/b.db" --devices "$work/devices.yaml" \
  >"$work/out" 2>"$work/err" || fail "relish run exited $?: $(tail -5 "$work/err")"
grep -q '^bad: trial ' "$work/out" || fail "no best: $(cat "$work/out")"
"$RELISH" trials --db "$work/b.db" --json >"$work/trials"

"$PY" - "$work/b.db" "$work/trials" "$work/err" <<'P'
import json, os, sqlite3, subprocess, sys
db = sqlite3.connect(sys.argv[1])
def check(c, w):
    if not c:
        sys.exit("FAIL: " + w)
by = {}
for tid, params, status, err in db.execute("SELECT id, params_json, status, error FROM trials"):
    by[json.loads(params)["behaviour"]] = (tid, status, err)
check(len(by) == 7, "behaviours %s" % sorted(by))
def segs(b):
    return db.execute("SELECT status, exit_code, signal, mem_reserved_mib, basis, log_path, message "
                      "FROM segments WHERE trial_id=? ORDER BY seq", (by[b][0],)).fetchall()
for b in ("ok", "garbage", "huge"):
    check(by[b][1] == "completed", "%s: trial %s" % (b, by[b]))
    check([s[0] for s in segs(b)] == ["completed"], "%s: segments %s" % (b, segs(b)))
s = segs("exit1")
check(by["exit1"][1] == "failed" and len(s) == 1 and s[0][:2] == ("failed", 1) and not s[0][2],
      "exit1: %s %s" % (by["exit1"], s))
check("exit code 1" in (by["exit1"][2] or ""), "exit1 reason %s" % (by["exit1"],))
s = segs("segv")
check(by["segv"][1] == "failed" and len(s) == 1 and s[0][0] == "signaled" and s[0][2] == 11,
      "segv: %s %s" % (by["segv"], s))
s = segs("hang")
check(by["hang"][1] == "failed" and len(s) == 1 and s[0][0] == "timeout", "hang: %s %s" % (by["hang"], s))
# Over its reservation: relish stopped it above its 64 MiB reservation (the
# host had memory to spare), re-placed with more (basis oom) until it fit,
# then completed.  Stored over_reservation, not oom (issue 30, item 8).
s = segs("oom")
check(s[0][0] == "over_reservation" and s[0][3] == 64, "oom first segment %s" % (s[0],))
# The raised reservation follows the peak the sampler caught before the kill
# (sampling every 200 ms), and the executor enforces reservation + 10 %, so
# the final reservation can sit a little under the 200 MiB touched.
# After three out-of-memory ends in a row the core's memory policy runs it
# alone on the whole host instead (basis exclusive), which happens when the
# sampler caught little of each peak.
check(s[-1][0] == "completed" and s[-1][3] * 1.1 >= 200 and
      (s[-1][4] == "oom" or (s[-1][4] == "exclusive" and len(s) == 4)), "oom last segment %s" % (s,))
check(all(x[0] == "over_reservation" for x in s[:-1]) and all(s[i+1][3] > s[i][3] for i in range(len(s) - 1)),
      "oom reservations must grow: %s" % (s,))
check(by["oom"][1] == "completed", "oom trial %s" % (by["oom"],))
# relish stopped it over its reservation on a host with memory to spare:
# said so (event, message, progress line), never "oom" as if the machine
# had run out (issue 30, item 8).
n_ev = db.execute("SELECT count(*) FROM events WHERE kind='segment.over_reservation' AND trial_id=?", (by["oom"][0],)).fetchone()[0]
check(n_ev == len(s) - 1, "over_reservation events %d for %d oom segments" % (n_ev, len(s) - 1))
check(all(x[6].startswith("over its memory reservation (reserved %d MiB, peak " % x[3]) and
          "relish stopped it at " in x[6] and "out of memory" not in x[6]
          for x in s[:-1]), "oom segments' messages %s" % ([x[6] for x in s],))
err = open(sys.argv[3]).read()
check(" over its reservation on host (reserved 64 MiB" in err and " oom on host" not in err,
      "progress lines: %s" % [l for l in err.splitlines() if "segment" in l])
# Logs bounded (64 MiB cap per segment) even for 80 MiB of output.
for b in ("garbage", "huge"):
    size = os.path.getsize(segs(b)[0][5])
    check(size <= (64 << 20) + (1 << 20), "%s log %d bytes" % (b, size))
check(os.path.getsize(segs("huge")[0][5]) >= (60 << 20), "huge log unexpectedly small")
# relish trials counts no out-of-memory for it: nothing ran out of memory
# (its oom count is the device's, or the trial's own words); relish logs
# says over_reservation for each stopped segment.
tj = json.load(open(sys.argv[2]))
tj = tj["trials"] if isinstance(tj, dict) else tj
row = [t for t in tj if t["params"].get("behaviour") == "oom"]
check(len(row) == 1 and row[0]["oom"] == 0 and row[0]["segments"] == len(s), "relish trials oom row: %s" % row)
logs = subprocess.run([os.environ["RELISH"], "logs", str(by["oom"][0]), "--db", sys.argv[1]],
                      capture_output=True, text=True).stdout
check(logs.count("over_reservation") >= len(s) - 1, "relish logs: %s" % logs[:2000])
check(db.execute("SELECT status FROM experiments").fetchone()[0] == "done", "experiment not done")
P
echo "test_run_bad: ok"
