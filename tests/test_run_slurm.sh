#!/usr/bin/env bash
# test_run_slurm.sh - `relish run` with trial.executor: slurm on a real,
# private two-node Slurm (scripts/slurm-up.sh: nodes $N1 and $N2, each with
# two stand-in GPUs split into 8 shards, 4 CPUs, 4 GiB).  Skipped (exit 77)
# where Slurm cannot run.  Cases:
#   devices  relish devices --slurm: four GPUs of 16 GiB and two hosts;
#   example  examples/ctrial/ctrial-slurm.yaml (6 GiB of a 16 GiB GPU:
#            --gres=shard:2) runs to the end across both nodes (the store
#            shows segments on both), and two of its segments ran on one
#            GPU at the same time (the jobs' own start and end lines);
#   fit      a 6 GiB and a 10 GiB experiment together: the small ones ask
#            for shard:2 and share GPUs, the big ones ask for shard:3 and
#            never run beside anything on their GPU (never more than the 4
#            shards of a GPU in use at once);
#   oom      a trial touching 200 MiB with a 100 MiB reservation ends
#            OUT_OF_MEMORY under --mem (the kernel's, with Slurm's cgroup
#            plugins; Slurm's sampler's "Exceeded job memory limit" where
#            no cgroup can be made, as in a container), is re-placed with
#            more memory each time, and completes;
#   crash    kill -9 of relish mid-run, a stray job with relish's owner
#            and an identity no segment has, then the same command: the
#            running jobs are adopted (no segment lost or run twice, no
#            metric stored twice), the stray job is cancelled, every trial
#            completes, and squeue shows no relish job at the end;
#   cancel   SIGINT mid-run: exit 130 once every job is cancelled, none left;
#   badpart  a partition that does not exist: exit 2 naming it and the
#            ones that do, before any job is submitted or the database made;
#   measured GPU memory measured on the node (the step wrapper through the
#            NVML stand-in, as a trial's 3000 MiB): segments placed before
#            the shape's first measurement run alone (--gres=gpu:1), those
#            placed after it ask for the one shard its measured peak needs,
#            and eight of them at once on four GPUs share;
#   nodefail $N1 fails under a running job (its slurmd gone, the node set
#            down): the job ends NODE_FAIL, the segment is lost without
#            using a retry and re-run on $N2, and the trial completes.
set -euo pipefail
. "$RELISH_SRC/tests/support/slurm_env.sh" slurm
PY=/usr/bin/python3
sql() {
  $PY -c 'import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in r))' "$@"
}
export ASAN_OPTIONS=detect_leaks=0

# spec NAME MAX_TRIALS CONCURRENT SCHEDULE TRIAL_ARGS RESOURCES [SLURM] [POLICY]
spec() {
  cat >"$work/$1.yaml" <<S
name: $1
objective: {metric: accuracy, mode: max}
search:
  algorithm: random
  seed: 7
  max_trials: $2
  max_concurrent: $3
  space:
    x: {type: uniform, low: 0.0, high: 1.0}
    y: {type: uniform, low: -5.0, high: 5.0}
schedule: $4
trial:
  command: ["$RELISH_BUILD/ctrial", "--x", "{x}", "--y", "{y}"$5]
  executor: slurm
  slurm: ${7:-{gpu_memory: 16GiB\}}
  env: {ASAN_OPTIONS: "detect_leaks=0"}
  resources: $6
sharing: {policy: ${8:-pack}}
S
}

# Each segment's job as its wrapper saw it: "log node gpus start end".
timeline() {
  $PY - "$@" <<'P'
import re, sys, glob
for d in sys.argv[1:]:
    for log in sorted(glob.glob(d + "/trial-*/seg-*.log")):
        start = end = None
        for line in open(log, errors="replace"):
            m = re.match(r"relish-slurm: start node=(\S+) gpus=(\S*) at=(\S+)", line)
            if m:
                node, gpus, start = m.group(1), m.group(2), float(m.group(3))
            m = re.match(r"relish-slurm: end .* at=(\S+)", line)
            if m:
                end = float(m.group(1))
        if start is not None and end is not None:
            print(log, node, gpus or "-", start, end)
P
}

# ---- devices -----------------------------------------------------------------
"$RELISH" devices --slurm --gpu-memory 16GiB --json >"$work/devices.json"
$PY - "$work/devices.json" "$N1" "$N2" <<'P' || fail "relish devices --slurm: $(cat "$work/devices.json")"
import json, sys
d = json.load(open(sys.argv[1]))
n1, n2 = sys.argv[2], sys.argv[3]
gpus = [x for x in d["devices"] if x["is_gpu"]]
hosts = [x for x in d["devices"] if not x["is_gpu"]]
assert d["source"] == "slurm partition main", d["source"]
assert sorted(x["uuid"] for x in gpus) == ["slurm:%s:gpu%d" % (n, g) for n in (n1, n2) for g in (0, 1)], gpus
assert all(x["memory_total_mib"] == 16384 for x in gpus), gpus
assert sorted(x["uuid"] for x in hosts) == ["slurm:" + n1, "slurm:" + n2], hosts
assert all(x["memory_total_mib"] == 4096 and x["compute_total"] == 4 for x in hosts), hosts
P
# without a GPU size (and no gpumem_ feature) the GPUs are left out, said why
"$RELISH" devices --slurm >"$work/devices.txt" 2>"$work/devices.err" || fail "relish devices --slurm: exit $?"
grep -q "slurm:$N1 " "$work/devices.txt" && ! grep -q "slurm:$N1:gpu" "$work/devices.txt" ||
  fail "relish devices --slurm without --gpu-memory: $(cat "$work/devices.txt")"
grep -q "their memory is unknown" "$work/devices.err" || fail "relish devices --slurm: no notice: $(cat "$work/devices.err")"
echo "ok: devices"

# ---- example: across both nodes, two segments on one GPU ------------------------
sed -e "s#\"../../build/release/ctrial\"#\"$RELISH_BUILD/ctrial\"#" \
  "$RELISH_SRC/examples/ctrial/ctrial-slurm.yaml" >"$work/ctrial-slurm.yaml"
grep -q "$RELISH_BUILD/ctrial" "$work/ctrial-slurm.yaml" || fail "could not point the example at $RELISH_BUILD/ctrial"
"$RELISH" run "$work/ctrial-slurm.yaml" --db "$work/example.db" --quiet >"$work/example.out" 2>"$work/example.err" ||
  fail "example exited $?: $(tail -5 "$work/example.err")"
grep -q 'accuracy = ' "$work/example.out" || fail "example printed no best trial"
nodes=$(sql "$work/example.db" "SELECT DISTINCT device FROM segments WHERE status='completed'" | cut -d: -f2 | sort -u | tr '\n' ' ')
[ "$nodes" = "$N1 $N2 " ] || fail "example: completed segments on nodes '$nodes', expected both $N1 and $N2"
bad=$(sql "$work/example.db" "SELECT count(*) FROM segments WHERE status != 'completed'")
[ "$bad" = 0 ] || fail "example: $bad segments did not complete"
gres=$(squeue -h -t all -o '%j|%b' | grep '^relish-ctrial-slurm-' | cut -d'|' -f2 | sort -u | tr '\n' ' ')
[ "$gres" = "gres:shard:2 " ] || fail "example: jobs asked for '$gres', expected gres:shard:2 (6 of 16 GiB in 4 shards)"
timeline "$work"/relish-runs/ctrial-slurm.* >"$work/example.tl"
$PY - "$work/example.tl" <<'P' || fail "example: no two segments ran on one GPU at once: $(cat "$work/example.tl")"
import sys
rows = [l.split() for l in open(sys.argv[1])]
shared = sum(1 for i, a in enumerate(rows) for b in rows[i + 1:]
             if a[1:3] == b[1:3] and float(a[3]) < float(b[4]) and float(b[3]) < float(a[4]))
assert shared >= 1, rows
print("example: %d segments, %d overlapping pairs on one GPU" % (len(rows), shared))
P
echo "ok: example"

# ---- fit: shards follow the reservations -------------------------------------------
spec small 8 8 "{algorithm: none, resource: epoch, max: 3}" ', "--sleep-ms", "400"' \
  "{gpus: 1, gpu_memory: 6GiB, memory: 128MiB}"
spec big 4 4 "{algorithm: none, resource: epoch, max: 3}" ', "--sleep-ms", "400"' \
  "{gpus: 1, gpu_memory: 10GiB, memory: 128MiB}"
"$RELISH" run "$work/small.yaml" "$work/big.yaml" --db "$work/fit.db" --quiet >"$work/fit.out" 2>"$work/fit.err" ||
  fail "fit exited $?: $(tail -5 "$work/fit.err")"
for e in small:2 big:3; do
  got=$(squeue -h -t all -o '%j|%b' | grep "^relish-${e%%:*}-" | cut -d'|' -f2 | sort -u | tr '\n' ' ')
  [ "$got" = "gres:shard:${e##*:} " ] || fail "fit: ${e%%:*} jobs asked for '$got', expected gres:shard:${e##*:}"
done
timeline "$work"/relish-runs/small.* | sed 's/^/small /' >"$work/fit.tl"
timeline "$work"/relish-runs/big.* | sed 's/^/big /' >>"$work/fit.tl"
$PY - "$work/fit.tl" <<'P' || fail "fit: $(cat "$work/fit.tl")"
import sys
rows = [l.split() for l in open(sys.argv[1])]
assert len(rows) == 12, "%d segments" % len(rows)
shards = {"small": 2, "big": 3}
pairs = {("small", "small"): 0, ("big", "small"): 0, ("big", "big"): 0}
for i, a in enumerate(rows):
    for b in rows[i + 1:]:
        if a[2:4] == b[2:4] and float(a[4]) < float(b[5]) and float(b[4]) < float(a[5]):
            pairs[tuple(sorted((a[0], b[0])))] += 1
    # what was in use on a's GPU the moment it started
    used = sum(shards[b[0]] for b in rows
               if b[2:4] == a[2:4] and float(b[4]) <= float(a[4]) < float(b[5]))
    assert used <= 4, "%s: %d shards in use on %s %s" % (a[1], used, a[2], a[3])
assert pairs[("small", "small")] >= 1, pairs
assert pairs[("big", "small")] == 0 and pairs[("big", "big")] == 0, pairs
print("fit: overlapping pairs on one GPU:", pairs)
P
echo "ok: fit"

# ---- oom: over --mem, re-placed with more, completes -----------------------------------
# 1.2 s per epoch: Slurm's sampler (once a second) must see the job over
# its --mem where no cgroup enforces it.
spec oom 1 1 "{algorithm: none, resource: epoch, max: 3}" ', "--alloc-mb", "200", "--sleep-ms", "1200"' \
  "{memory: 100MiB}" "{partition: main}"
"$RELISH" run "$work/oom.yaml" --db "$work/oom.db" --quiet >"$work/oom.out" 2>"$work/oom.err" ||
  fail "oom exited $?: $(tail -5 "$work/oom.err")"
sql "$work/oom.db" "SELECT seq, status, mem_reserved_mib, message FROM segments ORDER BY seq" >"$work/oom.segs"
$PY - "$work/oom.segs" <<'P' || fail "oom: $(cat "$work/oom.segs")"
import sys
rows = [l.rstrip("\n").split("|", 3) for l in open(sys.argv[1])]
ooms = [r for r in rows if r[1] == "oom"]
assert ooms, "no segment ended out of memory"
assert all("OUT_OF_MEMORY" in r[3] or "Exceeded job memory limit" in r[3] for r in ooms), ooms
assert rows[-1][1] == "completed", rows[-1]
res = [int(r[2]) for r in rows]
assert all(a < b for a, b in zip(res, res[1:])), "reservations %s do not grow" % res
print("oom: reservations", res, "->", [r[1] for r in rows])
P
[ "$(sql "$work/oom.db" "SELECT status FROM trials")" = completed ] || fail "oom: the trial did not complete"
echo "ok: oom"

# ---- crash: kill -9, adopt, clean up the rest -------------------------------------------
spec crash 6 4 "{algorithm: none, resource: epoch, max: 6, segment: 3}" ', "--sleep-ms", "1500"' \
  "{memory: 64MiB, cpus: 1}"
"$RELISH" run "$work/crash.yaml" --db "$work/crash.db" --quiet >"$work/crash1.out" 2>"$work/crash1.err" &
pids+=($!)
for _ in $(seq 300); do
  n=$(sql "$work/crash.db" "SELECT count(*) FROM segments WHERE status='running' AND handle IS NOT NULL" 2>/dev/null || echo 0)
  m=$(sql "$work/crash.db" "SELECT count(*) FROM metrics" 2>/dev/null || echo 0)
  [ "$n" -ge 2 ] && [ "$m" -ge 1 ] && break
  sleep 0.1
done
[ "$n" -ge 2 ] || fail "crash: fewer than 2 running jobs before the kill ($n)"
kill -9 "${pids[-1]}"
wait "${pids[-1]}" 2>/dev/null || true
running=$(relish_jobs | grep -c relish-crash- || true)
[ "$running" -ge 1 ] || fail "crash: no job of the killed relish is still running"
squeue -h -t all -o '%k' >"$work/comments"
owner=$(sed -n 's/^relish owner=\([0-9a-f]*\) experiment=crash .*/\1/p' "$work/comments" | sed -n 1p)
[ -n "$owner" ] || fail "crash: no job carries relish's identity"
stray=$(sbatch --parsable --job-name=relish-crash-t999-s0 --output=/dev/null --mem=16M \
  "--comment=relish owner=$owner experiment=crash trial=t999 segment=0-2 seq=0" --wrap 'sleep 300')
"$RELISH" run "$work/crash.yaml" --db "$work/crash.db" >"$work/crash2.out" 2>"$work/crash2.err" ||
  fail "crash: the second run exited $?: $(tail -5 "$work/crash2.err")"
grep -q 'adopted' "$work/crash2.err" || fail "crash: nothing adopted: $(head -20 "$work/crash2.err")"
adopted=$(sql "$work/crash.db" "SELECT count(*) FROM events WHERE kind='segment.adopted'")
[ "$adopted" -ge 1 ] || fail "crash: no segment.adopted event"
# at least one was still running: its output was read again while it grew
adoptions=$(sql "$work/crash.db" "SELECT message FROM events WHERE kind='segment.adopted'")
grep -q '(RUNNING) was adopted' <<<"$adoptions" || fail "crash: no running job adopted: $adoptions"
[ "$(sql "$work/crash.db" "SELECT count(*) FROM segments WHERE status != 'completed'")" = 0 ] ||
  fail "crash: segments not completed: $(sql "$work/crash.db" "SELECT id, status, message FROM segments WHERE status != 'completed'")"
twice=$(sql "$work/crash.db" "SELECT trial_id, resource_from, count(*) FROM segments GROUP BY 1, 2 HAVING count(*) > 1")
[ -z "$twice" ] || fail "crash: segments run twice: $twice"
dup=$(sql "$work/crash.db" "SELECT trial_id, name, resource, count(*) FROM metrics GROUP BY 1, 2, 3 HAVING count(*) > 1")
[ -z "$dup" ] || fail "crash: metrics stored twice: $dup"
[ "$(sql "$work/crash.db" "SELECT count(*) FROM trials WHERE status = 'completed'")" = 6 ] || fail "crash: not every trial completed"
st=$(squeue -h -t all -j "$stray" -o '%T')
[ "$st" = CANCELLED ] || fail "crash: the stray job $stray is $st, expected CANCELLED"
grep -q 'cancelled 1 Slurm job left by an earlier relish' "$work/crash2.err" || fail "crash: the stray job's cancel was not said"
[ -z "$(relish_jobs)" ] || fail "crash: relish jobs left: $(relish_jobs)"
echo "ok: crash ($adopted adopted)"

# ---- cancel: SIGINT leaves no job ----------------------------------------------------------
spec cancel 4 4 "{algorithm: none, resource: epoch, max: 20}" ', "--sleep-ms", "1000"' "{memory: 64MiB}"
"$RELISH" run "$work/cancel.yaml" --db "$work/cancel.db" --quiet >"$work/cancel.out" 2>"$work/cancel.err" &
pids+=($!)
for _ in $(seq 300); do
  n=$(sql "$work/cancel.db" "SELECT count(*) FROM metrics" 2>/dev/null || echo 0)
  [ "$n" -ge 2 ] && break
  sleep 0.1
done
[ "$n" -ge 2 ] || fail "cancel: no trial printed a metric"
kill -INT "${pids[-1]}"
rc=0
wait "${pids[-1]}" || rc=$?
[ "$rc" = 130 ] || fail "cancel: exit $rc, expected 130: $(tail -3 "$work/cancel.err")"
[ -z "$(relish_jobs)" ] || fail "cancel: relish jobs left: $(relish_jobs)"
c=$(sql "$work/cancel.db" "SELECT count(*) FROM segments WHERE status = 'cancelled'")
[ "$c" -ge 1 ] || fail "cancel: no segment recorded cancelled"
echo "ok: cancel"

# ---- badpart: a partition that does not exist -------------------------------------------------
spec badpart 2 2 "{algorithm: none, resource: epoch, max: 1}" "" "{memory: 64MiB}" "{partition: nope}"
before=$(squeue -h -t all | wc -l)
rc=0
"$RELISH" run "$work/badpart.yaml" --db "$work/badpart.db" >"$work/badpart.out" 2>"$work/badpart.err" || rc=$?
[ "$rc" = 2 ] || fail "badpart: exit $rc, expected 2: $(cat "$work/badpart.err")"
grep -q "Slurm has no partition 'nope' (it has: main (default))" "$work/badpart.err" ||
  fail "badpart: unclear error: $(cat "$work/badpart.err")"
[ ! -e "$work/badpart.db" ] || fail "badpart: a database was created"
after=$(squeue -h -t all | wc -l)
[ "$before" = "$after" ] || fail "badpart: jobs were submitted ($before -> $after)"
echo "ok: badpart"

# ---- measured: GPU memory measured on the node decides the shards ------------------------
cat >"$work/nvml" <<S
driver 550.54.15
device GPU-fake-0 16384 NVIDIA Stand-in 16GB
device GPU-fake-1 16384 NVIDIA Stand-in 16GB
state $work/nvml-state
S
: >"$work/nvml-state"
cat >"$work/measured.yaml" <<S
name: measured
objective: {metric: accuracy, mode: max}
search:
  algorithm: random
  seed: 5
  max_trials: 12
  max_concurrent: 8
  space:
    shape: {type: choice, values: [one]}
    x: {type: uniform, low: 0.0, high: 1.0}
schedule: {algorithm: none, resource: epoch, max: 3}
trial:
  command: ["/bin/sh", "$RELISH_SRC/tests/support/gpu_fake_trial.sh", "3000", "$work/nvml-state"]
  executor: slurm
  slurm: {gpu_memory: 16GiB}
  resources: {gpus: 1, cpus: 1}
  shape_params: [shape]
sharing: {policy: relish}
S
RELISH_NVML_LIBRARY="$RELISH_BUILD/libnvidia-ml-standin.so" RELISH_NVML_SCRIPT="$work/nvml" \
  "$RELISH" run "$work/measured.yaml" --db "$work/measured.db" --quiet >"$work/measured.out" 2>"$work/measured.err" ||
  fail "measured exited $?: $(tail -5 "$work/measured.err")"
# What each job asked for, beside what the store says its placement was
squeue -h -t all -o '%i|%b' >"$work/measured.jobs"
sql "$work/measured.db" "SELECT handle, basis, mem_reserved_mib FROM segments ORDER BY id" >"$work/measured.segs"
$PY - "$work/measured.jobs" "$work/measured.segs" <<'P' || fail "measured: $(cat "$work/measured.segs")"
import sys
gres = dict(l.strip().split("|") for l in open(sys.argv[1]))
segs = [l.strip().split("|") for l in open(sys.argv[2])]
alone = [s for s in segs if s[1] == "exclusive"]
fitted = [s for s in segs if s[1] == "profile"]
# before the first measurement: alone on a whole GPU
assert alone and all(gres[s[0]] == "gres:gpu:1" for s in alone), (alone, gres)
# after it: the measured 3000 MiB plus the margin, under one 4 GiB shard
assert fitted and all(gres[s[0]] == "gres:shard:1" and 3000 < int(s[2]) <= 4096 for s in fitted), (fitted, gres)
print("measured: %d alone (gpu:1), %d from the measured peak (shard:1, %s MiB)" % (len(alone), len(fitted), fitted[0][2]))
P
peaks=$(sql "$work/measured.db" "SELECT DISTINCT peak_mem_mib FROM segments WHERE status='completed'")
[ "$peaks" = 3000 ] || fail "measured: peaks '$peaks', expected the 3000 MiB the trials used"
timeline "$work"/relish-runs/measured.* >"$work/measured.tl"
$PY - "$work/measured.tl" <<'P' || fail "measured: no two segments shared a GPU: $(cat "$work/measured.tl")"
import sys
rows = [l.split() for l in open(sys.argv[1])]
shared = sum(1 for i, a in enumerate(rows) for b in rows[i + 1:]
             if a[1:3] == b[1:3] and float(a[3]) < float(b[4]) and float(b[3]) < float(a[4]))
# 8 at once on 4 GPUs once the shape is known: some share one
assert len(rows) == 12 and shared >= 1, (len(rows), shared)
P
echo "ok: measured"

# ---- nodefail: a node fails under a job; re-run elsewhere ------------------------------------
spec nodefail 2 2 "{algorithm: none, resource: epoch, max: 6}" ', "--sleep-ms", "700"' \
  "{memory: 64MiB, cpus: 4}"
"$RELISH" run "$work/nodefail.yaml" --db "$work/nodefail.db" --quiet >"$work/nodefail.out" 2>"$work/nodefail.err" &
pids+=($!)
job=""
for _ in $(seq 300); do
  job=$(sql "$work/nodefail.db" "SELECT s.handle FROM segments s JOIN metrics m ON m.segment_id = s.id
    WHERE s.status = 'running' AND s.device = 'slurm:$N1' AND s.handle IS NOT NULL LIMIT 1" 2>/dev/null || true)
  [ -n "$job" ] && break
  sleep 0.1
done
[ -n "$job" ] || fail "nodefail: no segment ran on $N1"
# $N1 fails: its slurmd is gone, the node is set down (its jobs end
# NODE_FAIL), and what its job left running there is killed by id.
kill -9 "$(cat "$work/slurm/slurmd-$N1.pid")"
scontrol update nodename="$N1" state=down reason=relish-test-node-failure
for f in $(find /sys/fs/cgroup -path "*slurm_$N1/*/job_$job/*" -name cgroup.procs 2>/dev/null); do
  for p in $(cat "$f"); do kill -9 "$p" 2>/dev/null || true; done
done
rc=0
wait "${pids[-1]}" || rc=$?
[ "$rc" = 0 ] || fail "nodefail exited $rc: $(tail -5 "$work/nodefail.err")"
sql "$work/nodefail.db" "SELECT trial_id, seq, status, device, message FROM segments ORDER BY trial_id, seq" >"$work/nodefail.segs"
grep -q "^[0-9]*|0|lost|slurm:$N1|Slurm: NODE_FAIL" "$work/nodefail.segs" || fail "nodefail: no segment lost to NODE_FAIL: $(cat "$work/nodefail.segs")"
lost_trial=$(grep '|lost|' "$work/nodefail.segs" | cut -d'|' -f1)
grep -q "^$lost_trial|1|completed|slurm:$N2|" "$work/nodefail.segs" || fail "nodefail: the lost segment was not re-run on $N2: $(cat "$work/nodefail.segs")"
[ "$(sql "$work/nodefail.db" "SELECT count(*) FROM trials WHERE status = 'completed'")" = 2 ] ||
  fail "nodefail: not every trial completed (retries: 0, so the loss used none)"
[ -z "$(relish_jobs)" ] || fail "nodefail: relish jobs left: $(relish_jobs)"
echo "ok: nodefail"
