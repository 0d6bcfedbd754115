#!/usr/bin/env bash
# test_run_gpu_family.sh - the family model saves exclusive runs, live.  Two
# stand-in 8 GiB GPUs; a fake trial (tests/support/gpu_family_trial.sh)
# uses 300 + 4*batch MiB at 25 % SM, reported per process by the NVML
# stand-in.  Policy relish, no memory hint: a shape never seen runs alone
# until two shapes of the command are measured; after that new shapes are
# placed on the family model's estimate (basis family), beside others.
# Checked from the store with SQL:
#   - every trial completed; at most 4 segments ran alone (basis exclusive);
#   - every family-basis segment started after >= 2 shapes had a measured
#     peak, and its estimate is within 5 % of the measured peak (the law is
#     linear, so the fit is exact up to rounding);
#   - measured peaks equal the law, mean utilisation is the 25 % the trial
#     reported, stored per segment and per profile;
#   - segments shared GPUs, and at every start the reservations on that GPU
#     summed to <= 8192 MiB;
#   - `relish trials` and `relish profiles` show the estimates and errors;
#   - a second experiment in the same database (new batch values) starts on
#     family estimates at once: the stored profiles seed the model.
set -euo pipefail
. "$RELISH_SRC/tests/support/fake_gpus.sh" gpu-family

spec() { # NAME SEED TRIALS VALUES
	cat <<S
name: $1
objective: {metric: accuracy, mode: max}
search:
  algorithm: random
  seed: $2
  max_trials: $3
  max_concurrent: $3
  space:
    batch: {type: choice, values: [$4]}
schedule: {algorithm: none, resource: epoch, max: 2}
trial:
  command: ["/bin/sh", "$RELISH_SRC/tests/support/gpu_family_trial.sh", "{batch}", "$work/state"]
  resources: {gpus: 1, cpus: 0.1}
  retries: 0
sharing: {policy: relish}
S
}
spec family 5 12 "16, 64, 128, 192, 256, 320, 384, 448" >"$work/a.yaml"
spec family-2 6 3 "96, 224, 288" >"$work/b.yaml"

"$RELISH" run "$work/a.yaml" --db "$work/g.db" >"$work/out" 2>"$work/err" \
  || fail "relish run exited $?: $(tail -5 "$work/err")"
"$RELISH" trials --db "$work/g.db" --experiment family >"$work/trials"
"$RELISH" profiles --db "$work/g.db" --json >"$work/profiles.json"
"$RELISH" run "$work/b.yaml" --db "$work/g.db" >"$work/out2" 2>"$work/err2" \
  || fail "second relish run exited $?: $(tail -5 "$work/err2")"

"$PY" - "$work/g.db" "$work/trials" "$work/profiles.json" <<'P'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
def check(c, w):
    if not c:
        sys.exit("FAIL: " + w)
law = lambda b: 300 + 4 * b
def segs(exp):
    return db.execute("""
        SELECT g.id, json_extract(t.params_json, '$.batch'), g.status, g.device, g.basis,
               g.mem_reserved_mib, g.est_mem_mib, g.peak_mem_mib, g.mean_util, g.started_at, g.ended_at
        FROM segments g JOIN trials t ON t.id = g.trial_id JOIN experiments x ON x.id = t.experiment_id
        WHERE x.name = ? ORDER BY g.started_at, g.id""", (exp,)).fetchall()
a = segs("family")
st = dict(db.execute("SELECT status, count(*) FROM trials GROUP BY status").fetchall())
check(st == {"completed": 15}, "trials %s" % st)
check(all(s[2] == "completed" for s in a), "segments %s" % a)
check(len({s[1] for s in a}) >= 5, "too few shapes drawn: %s" % sorted({s[1] for s in a}))
bases = [s[4] for s in a]
check(bases.count("exclusive") <= 4, "%d segments ran alone: %s" % (bases.count("exclusive"), bases))
fam = [s for s in a if s[4] == "family"]
check(len(fam) >= 3, "family estimates used %d times: %s" % (len(fam), bases))
for s in a:
    check(s[7] == law(s[1]), "segment %d peak %s, law %d" % (s[0], s[7], law(s[1])))
    check(s[8] == 25, "segment %d mean utilisation %s" % (s[0], s[8]))
for s in fam:
    measured = {x[1] for x in a if x[10] is not None and x[10] <= s[9] and x[7]}
    check(len(measured) >= 2, "family estimate for segment %d with shapes %s measured" % (s[0], measured))
    check(abs(s[6] - s[7]) <= 0.05 * s[7], "segment %d estimate %s vs peak %s" % (s[0], s[6], s[7]))
    check(s[5] >= s[7], "segment %d reserved %s below its peak %s" % (s[0], s[5], s[7]))
rows = db.execute("""
    SELECT a.id, a.device, sum(b.mem_reserved_mib), count(b.id)
    FROM segments a JOIN segments b ON b.device = a.device
         AND b.started_at <= a.started_at AND a.started_at < b.ended_at
    GROUP BY a.id""").fetchall()
check(max(r[2] for r in rows) <= 8192, "over-committed GPU: %s" % (max(rows, key=lambda r: r[2]),))
check(max(r[3] for r in rows) >= 2, "segments never shared a GPU: %s" % rows)
# relish trials: family rows carry estimate, peak and error.
lines = [l for l in open(sys.argv[2]) if " family " in l]
check(len(lines) >= 1, "no family row in relish trials:\n" + open(sys.argv[2]).read())
# relish profiles: the estimates made by the family model and their errors.
prof = json.load(open(sys.argv[3]))
pf = [p for p in prof if p["est_basis"] == "family"]
check(len(pf) >= 2, "profiles with family estimates: %s" % prof)
for p in pf:
    check(p["peak_mem_mib"] == law(p["params"]["batch"]) and abs(p["est_error"]) <= 0.05
          and p["mean_util"] == 25, "profile %s" % p)
# The second experiment: unseen shapes, estimated at once from stored profiles.
b = segs("family-2")
# (A value drawn twice may find its first segment measured: basis profile;
# or still running: then it runs whole, basis exclusive, since relish bets
# one segment of a shape at a time on an estimate.)
first = {}
for s in b:
    first.setdefault(s[1], s)
def ok_repeat(s):
    f = first[s[1]]
    return s[4] == "profile" or (s[4] == "exclusive" and f[9] <= s[9] < f[10])
check(len(b) == 3 and all(s[2] == "completed" for s in b)
      and all(s[4] == "family" for s in first.values())
      and all(ok_repeat(s) for s in b if s is not first[s[1]]), "second run %s" % b)
for s in b:
    check(abs(s[6] - law(s[1])) <= 0.05 * law(s[1]), "second run estimate %s" % (s,))
print("test_run_gpu_family: %d segments, %d exclusive, %d family; estimate errors %s %%" % (
    len(a), bases.count("exclusive"), len(fam),
    [round(100.0 * (s[6] - s[7]) / s[7], 1) for s in fam + b]))
P
echo "test_run_gpu_family: ok"
