#!/usr/bin/env bash
# test_sim_live.sh - the live run and the simulator make the same placement
# decisions on the same small workload, and the same out-of-memory decisions
# (second part, below the first).  Both drivers call the same core
# (src/sched/); this test feeds them the same requests and compares what
# the core decided: device, reservation and basis of every segment started
# in the first wave (nothing has finished yet), and for `exclusive` the
# whole start order.
#
# Workload: six one-segment trials of tests/support/sim_live_trial.sh on two
# stand-in 8 GiB GPUs.  A trial's parameter "job" is NEED:SECS:SM (MiB of
# GPU memory, seconds, SM percent), so each trial is its own shape, and the
# same job is one row of a simulator trace.  A spec gives one memory hint to
# all its trials, so per-trial needs come from measurements instead:
#   phase 1  `relish run --policy exclusive` measures every shape alone
#            (profiles: peak = NEED, utilisation = SM);
#   phase 2  per policy, a copy of that store, a new experiment of the same
#            six jobs (no hint): every reservation has basis "profile",
#            peak x 1.2 + 256 MiB (A 3256, B 5056, C 2056, D 3856, E 6256,
#            F 1456), and relish's co-location model uses the measured SM.
# The trace repeats this: phase-1 rows at t=0 (no hint, unknown shapes run
# alone and get measured; each row its own `model`, hence its own shape and
# family, so no family estimate is ever made), phase-2 rows at t=1000 with
# the same experiment and model (the same shapes), `--hints none`,
# `--order fifo` (the live driver's priority is 0 for all: FIFO),
# `--restart-cost-s 0`, `--colocate none` and `--window 2` (the default,
# said for the reader), which is the live driver's SCHED_ADMIT_WINDOW (it
# hands the core at most 2 unplaced new trials per experiment, so nothing
# behind them is backfilled; every trial here has one segment, so a
# started trial's next segment, which the window does not count, never
# arises).
#
# Worked examples (trials in grid order A..F; GPUs 0 and 1 of 8192 MiB):
#   exclusive  A0 B1 at 0; A ends 1: C0; C ends 2: D0; B ends 3: E1;
#              D ends 4: F0.  Every reservation 8192, basis exclusive.
#   pack       A0 (tie: lower index); B (5056) fits only GPU1; C: best fit
#              GPU1 (1080 left, not 2880); D (3856) only GPU0 (4936 free);
#              E and F fit nowhere (1080 free on each) and wait.
#   relish     A0; B1; C beside A (25 + 40 % SM: no slowdown, gain 1.0)
#              rather than beside B (90 + 40 %: 2 x 100/130, gain 0.54),
#              leaving 2880 and 3136 MiB free: D (3856) and E wait, and F
#              is not yet handed to the core (window of 2).
set -euo pipefail
. "$RELISH_SRC/tests/support/fake_gpus.sh" sim-live

# The grid with seed 1 visits the six values in the order 4, 5, 6, 2, 3, 1
# of this list, so the trials come as A..F (asserted below).
spec() { # NAME
	cat <<S
name: $1
objective: {metric: accuracy, mode: max}
search:
  algorithm: grid
  seed: 1
  max_concurrent: 6
  space:
    job: {type: choice, values: ["1000:1:25", "3000:2:25", "5000:2:25", "2500:1:25", "4000:3:90", "1500:1:40"]}
trial:
  command: ["/bin/sh", "$RELISH_SRC/tests/support/sim_live_trial.sh", "{job}", "$work/state"]
  resources: {gpus: 1, cpus: 0.1}
  retries: 0
S
}

spec measure >"$work/measure.yaml"
"$RELISH" run "$work/measure.yaml" --db "$work/base.db" --policy exclusive >"$work/out" 2>"$work/err" \
  || fail "phase 1: relish run exited $?: $(tail -5 "$work/err")"
for policy in exclusive pack relish; do
	"$PY" -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).backup(sqlite3.connect(sys.argv[2]))' \
	  "$work/base.db" "$work/$policy.db"
	spec "run-$policy" >"$work/$policy.yaml"
	"$RELISH" run "$work/$policy.yaml" --db "$work/$policy.db" --policy "$policy" >"$work/out" 2>"$work/err" \
	  || fail "$policy: relish run exited $?: $(tail -5 "$work/err")"
done

# The trace: the live trials in their order, phase 1 then phase 2.
"$PY" - "$work" >"$work/trace.csv" <<'P'
import json, sqlite3, sys
db = sqlite3.connect("%s/base.db" % sys.argv[1])
jobs = [json.loads(p)["job"] for (p,) in
        db.execute("SELECT params_json FROM trials ORDER BY idx")]
print("job_id,submit_time_s,duration_s,num_gpus,gpu_mem_mib,gpu_util_pct,experiment,model,batchsize")
for phase, t in (("m", 0), ("r", 1000)):
    for k, job in enumerate(jobs):
        need, secs, sm = job.split(":")
        print("%s-%s,%d,%s,1,%s,%s,simlive,%s,1" % (phase, "ABCDEF"[k], t, secs, need, sm, "ABCDEF"[k]))
P
for policy in exclusive pack relish; do
	"$RELISH" simulate --trace "$work/trace.csv" --gpus 2 --gpu-memory 8192 --policy "$policy" \
	  --order fifo --hints none --restart-cost-s 0 --colocate none --window 2 \
	  --out "$work/sim" --placements >"$work/out" 2>"$work/err" \
	  || fail "$policy: relish simulate exited $?: $(tail -5 "$work/err")"
done

"$PY" - "$work" <<'P'
import csv, json, sqlite3, sys
work = sys.argv[1]
letters = "ABCDEF"
fails = []

def check(c, what):
    if not c:
        fails.append(what)

base = sqlite3.connect("%s/base.db" % work)
jobs = [json.loads(p)["job"] for (p,) in base.execute("SELECT params_json FROM trials ORDER BY idx")]
check(jobs == ["2500:1:25", "4000:3:90", "1500:1:40", "3000:2:25", "5000:2:25", "1000:1:25"],
      "grid order: %s" % jobs)
prof = sorted((p, u) for p, u in base.execute("SELECT peak_mem_mib, mean_util FROM profiles"))
check(prof == [(1000, 25), (1500, 40), (2500, 25), (3000, 25), (4000, 90), (5000, 25)],
      "phase-1 profiles (peak, util): %s" % prof)

def live(policy):
    """Phase-2 segments in start order: (trial, gpu, MiB, basis, start, end)."""
    db = sqlite3.connect("%s/%s.db" % (work, policy))
    rows = db.execute("""
        SELECT t.idx, s.device, s.mem_reserved_mib, s.basis, s.started_at, s.ended_at, s.status
        FROM segments s JOIN trials t ON t.id = s.trial_id
        JOIN experiments e ON e.id = t.experiment_id
        WHERE e.name = ? ORDER BY s.started_at, s.id""", ("run-" + policy,)).fetchall()
    check(all(r[6] == "completed" for r in rows) and len(rows) == 6,
          "%s: live segments %s" % (policy, rows))
    t0 = min(r[4] for r in rows)
    return [(letters[r[0]], int(r[1].rsplit("-", 1)[1]), r[2], r[3], r[4] - t0, r[5] - t0)
            for r in rows]

def sim(policy):
    """Phase-2 placements in event order: (trial, gpu, MiB, basis, start)."""
    with open("%s/sim/placements_%s.csv" % (work, policy)) as f:
        rows = list(csv.DictReader(f))
    return [(r["job_id"][2:], int(r["devices"]), int(r["mem_mib"]), r["basis"],
             float(r["time_s"]) - 1000) for r in rows if r["job_id"].startswith("r-")]

expect_wave = {
    "exclusive": [("A", 0, 8192, "exclusive"), ("B", 1, 8192, "exclusive")],
    "pack": [("A", 0, 3256, "profile"), ("B", 1, 5056, "profile"),
             ("C", 1, 2056, "profile"), ("D", 0, 3856, "profile")],
    "relish": [("A", 0, 3256, "profile"), ("B", 1, 5056, "profile"),
               ("C", 0, 2056, "profile")],
}
expect_exclusive = ["A0", "B1", "C0", "D0", "E1", "F0"]
out = []
for policy in ("exclusive", "pack", "relish"):
    L, S = live(policy), sim(policy)
    # First wave: started before any phase-2 segment ended (live), at the
    # phase-2 arrival (simulator).
    first_end = min(r[5] for r in L)
    lw = [r[:4] for r in L if r[4] < first_end]
    sw = [r[:4] for r in S if r[4] == 0]
    if lw != sw or lw != expect_wave[policy]:
        fails.append("%s first wave:\n  live      %s\n  simulator %s\n  expected  %s"
                     % (policy, lw, sw, expect_wave[policy]))
    if policy == "exclusive":
        lo = ["%s%d" % (r[0], r[1]) for r in L]
        so = ["%s%d" % (r[0], r[1]) for r in S]
        if lo != so or lo != expect_exclusive or any(r[2:4] != (8192, "exclusive") for r in L + S):
            fails.append("exclusive start order:\n  live      %s\n  simulator %s\n  expected  %s"
                         % ([r[:5] for r in L], S, expect_exclusive))
    out.append("%s: %s" % (policy, " ".join("%s%d/%d" % r[:3] for r in lw)))
if fails:
    sys.exit("FAIL: " + "\nFAIL: ".join(fails))
print("test_sim_live: same first wave live and simulated: " + "; ".join(out))
P

# ---- Out of memory: the same decisions live and simulated --------------------------
# Four trials that declare 1000 MiB (pack reserves the hint) but need 900,
# 1400, 2000 and 4000 MiB.  Live, a trial given less than it needs fails at
# once with the CUDA message; simulated, a segment whose true peak exceeds
# its reservation runs out of memory at its end.  Both drivers hand the end
# to the core's memory policy (sched_mem_decide), so every trial gets the
# same sequence of reservations and bases, worked out by hand:
#   A 900   1000 hint: completes
#   D 1400  1000 hint (oom), max(1000 x 1.5, 1000 x 1.2) = 1500 oom: completes
#   B 2000  1000 hint (oom), 1500 oom (oom), 2250 oom: completes
#   C 4000  1000 hint (oom), 1500 oom (oom), 2250 oom (oom): three in a row,
#           so alone on a whole GPU, 8192 exclusive: completes
# Timing differs (live out-of-memory ends come at once, simulated ones at
# the segment's end), so what is compared is each trial's decisions, not
# devices or start times.
cat >"$work/oom.yaml" <<S
name: oom
objective: {metric: accuracy, mode: max}
search:
  algorithm: grid
  seed: 1
  max_concurrent: 4
  space:
    job: {type: choice, values: ["900:1:25", "1400:1:25", "2000:1:25", "4000:1:25"]}
trial:
  command: ["/bin/sh", "$RELISH_SRC/tests/support/sim_live_trial.sh", "{job}", "$work/state"]
  resources: {gpus: 1, gpu_memory: 1000MiB, cpus: 0.1}
  retries: 0
sharing: {policy: pack}
S
"$RELISH" run "$work/oom.yaml" --db "$work/oom.db" >"$work/out" 2>"$work/err" \
  || fail "oom: relish run exited $?: $(tail -5 "$work/err")"
"$PY" - "$work" >"$work/oom-trace.csv" <<'P'
import json, sqlite3, sys
db = sqlite3.connect("%s/oom.db" % sys.argv[1])
print("job_id,submit_time_s,duration_s,num_gpus,gpu_mem_mib,gpu_util_pct,experiment,model,batchsize,mem_hint_mib")
for (p,) in db.execute("SELECT params_json FROM trials ORDER BY idx"):
    need, secs, sm = json.loads(p)["job"].split(":")
    print("o%s,0,%s,1,%s,%s,oom,m%s,1,1000" % (need, secs, need, sm, need))
P
"$RELISH" simulate --trace "$work/oom-trace.csv" --gpus 2 --gpu-memory 8192 --policy pack \
  --order fifo --restart-cost-s 0 --colocate none --out "$work/oom-sim" --placements \
  >"$work/out" 2>"$work/err" || fail "oom: relish simulate exited $?: $(tail -5 "$work/err")"
"$PY" - "$work" <<'P'
import csv, json, sqlite3, sys
work = sys.argv[1]
db = sqlite3.connect("%s/oom.db" % work)
live = {}
for p, status, res, basis, st in db.execute("""
        SELECT t.params_json, t.status, s.mem_reserved_mib, s.basis, s.status
        FROM segments s JOIN trials t ON t.id = s.trial_id ORDER BY s.trial_id, s.seq"""):
    need = int(json.loads(p)["job"].split(":")[0])
    live.setdefault(need, []).append((res, basis, st))
    if status != "completed":
        sys.exit("FAIL: oom: live trial %d %s" % (need, status))
sim = {}
with open("%s/oom-sim/placements_pack.csv" % work) as f:
    for r in csv.DictReader(f):
        sim.setdefault(int(r["job_id"][1:]), []).append((int(r["mem_mib"]), r["basis"]))
expect = {
    900: [(1000, "hint")],
    1400: [(1000, "hint"), (1500, "oom")],
    2000: [(1000, "hint"), (1500, "oom"), (2250, "oom")],
    4000: [(1000, "hint"), (1500, "oom"), (2250, "oom"), (8192, "exclusive")],
}
fails = []
for need, want in sorted(expect.items()):
    l = live.get(need, [])
    got = [(r, b) for r, b, _ in l]
    ends = [st for _, _, st in l]
    if got != want or sim.get(need) != want or ends != ["oom"] * (len(want) - 1) + ["completed"]:
        fails.append("trial needing %d MiB:\n  live      %s\n  simulator %s\n  expected  %s"
                     % (need, l, sim.get(need), want))
if fails:
    sys.exit("FAIL: oom: " + "\nFAIL: oom: ".join(fails))
print("test_sim_live: same out-of-memory decisions live and simulated: " +
      "; ".join("%d: %s" % (n, "/".join("%d %s" % x for x in w)) for n, w in sorted(expect.items())))
P
echo "test_sim_live: ok"
