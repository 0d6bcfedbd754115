#!/usr/bin/env bash
# test_run_gpu.sh - the GPU path of `relish run` without a GPU: the scripted
# NVML stand-in shows two 8 GiB GPUs; trials (tests/support/gpu_fake_trial.sh)
# declare gpus: 1 and "use" the memory of their `need` parameter, which the
# stand-in reports per process.  Checked from the store and the logs:
# segments are packed by memory (several share a GPU, reservations never
# sum past 8 GiB), each trial saw CUDA_VISIBLE_DEVICES=<its GPU's UUID> and
# RELISH_GPU_MEMORY_MIB=<its reservation>, peaks were measured through
# NVML, and a trial that needs more than the declared 1 GiB fails with the
# CUDA out-of-memory message, is re-placed with a larger reservation and
# completes; its out-of-memory events show in `relish trials`.
set -euo pipefail
. "$RELISH_SRC/tests/support/fake_gpus.sh" gpu

cat >"$work/gpu.yaml" <<S
name: gpu
objective: {metric: accuracy, mode: max}
search:
  algorithm: random
  seed: 3
  max_trials: 10
  max_concurrent: 10
  space:
    need: {type: choice, values: [700, 900, 2500]}
schedule: {algorithm: none, resource: epoch, max: 2}
trial:
  command: ["/bin/sh", "$RELISH_SRC/tests/support/gpu_fake_trial.sh", "{need}", "$work/state"]
  resources: {gpus: 1, gpu_memory: 1GiB, cpus: 0.1}
  retries: 0
sharing: {policy: pack}
S

"$RELISH" run "$work/gpu.yaml" --db "$work/g.db" >"$work/out" 2>"$work/err" \
  || fail "relish run exited $?: $(tail -5 "$work/err")"
"$RELISH" trials --db "$work/g.db" >"$work/trials"

"$PY" - "$work/g.db" "$work/trials" <<'P'
import json, re, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
def check(c, w):
    if not c:
        sys.exit("FAIL: " + w)
st = dict(db.execute("SELECT status, count(*) FROM trials GROUP BY status").fetchall())
check(st == {"completed": 10}, "trials %s" % st)
needs = {}
for tid, p in db.execute("SELECT id, params_json FROM trials"):
    needs[tid] = json.loads(p)["need"]
check(2500 in needs.values() and 700 in needs.values(), "need values drawn: %s" % sorted(set(needs.values())))
segs = db.execute("SELECT id, trial_id, status, device, mem_reserved_mib, peak_mem_mib, basis, log_path, "
                  "started_at, ended_at, message FROM segments ORDER BY id").fetchall()
for sid, tid, status, dev, res, peak, basis, log, a, b, msg in segs:
    check(dev in ("GPU-fake-0", "GPU-fake-1"), "segment %d on %s" % (sid, dev))
    text = open(log).read()
    m = re.search(r"ENV CUDA_VISIBLE_DEVICES=(\S*) RELISH_GPU_MEMORY_MIB=(\S*) TF_FORCE_GPU_ALLOW_GROWTH=(\S*)", text)
    check(m is not None, "segment %d log has no env line: %r" % (sid, text[:200]))
    check(m.group(1) == dev, "segment %d saw CUDA_VISIBLE_DEVICES=%s, placed on %s" % (sid, m.group(1), dev))
    check(int(m.group(2)) == res, "segment %d saw RELISH_GPU_MEMORY_MIB=%s, reserved %d" % (sid, m.group(2), res))
    check(m.group(3) == "true", "TF_FORCE_GPU_ALLOW_GROWTH=%s" % m.group(3))
    if needs[tid] < 1024:
        check(status == "completed" and res == 1024 and basis == "hint", "small trial segment %s" % (segs,))
        # Measured through NVML (the stand-in's per-process memory, by process group).
        check(peak == needs[tid], "segment %d peak %s, trial used %d" % (sid, peak, needs[tid]))
# The 2500 MiB trials: out of memory at 1 GiB, re-placed larger (basis oom:
# x1.5 each time, the core's memory policy) until they fit, or, after three
# out-of-memory ends in a row, alone on a whole GPU (basis exclusive).
for tid, need in needs.items():
    if need != 2500:
        continue
    s = [x for x in segs if x[1] == tid]
    check(s[0][2] == "oom" and s[0][4] == 1024 and "CUDA out of memory" in s[0][10], "first %s" % (s[0],))
    check(s[-1][2] == "completed" and s[-1][4] >= 2500 and
          (s[-1][6] == "oom" or (s[-1][6] == "exclusive" and s[-1][4] == 8192 and len(s) == 4)),
          "last %s" % (s,))
    check(all(b[4] * 1.5 <= a[4] for a, b in zip(s[1:-1], s[:-2])), "raises %s" % (s,))
    check(all(x[2] == "oom" for x in s[:-1]), "oom ladder %s" % (s,))
    ev = db.execute("SELECT count(*) FROM events WHERE kind='segment.oom' AND trial_id=?", (tid,)).fetchone()[0]
    check(ev == len(s) - 1, "oom events %d" % ev)
    row = [l for l in open(sys.argv[2]) if re.match(r"\s*%d\s" % tid, l)]
    check(len(row) == 1 and re.search(r"completed .* %d\s+\{" % (len(s) - 1), row[0]) is not None,
          "relish trials row for trial %d: %s" % (tid, row))
# Packing: at each segment's start, the reservations running on its GPU
# sum to at most 8 GiB, and at some instant several segments shared a GPU.
rows = db.execute("""
    SELECT a.id, a.device, sum(b.mem_reserved_mib), count(b.id)
    FROM segments a JOIN segments b ON b.device = a.device
         AND b.started_at <= a.started_at AND a.started_at < b.ended_at
    GROUP BY a.id""").fetchall()
check(max(r[2] for r in rows) <= 8192, "over-committed GPU: %s" % (max(rows, key=lambda r: r[2]),))
check(max(r[3] for r in rows) >= 3, "segments never shared a GPU: %s" % rows)
check(len({r[1] for r in rows}) == 2, "only one GPU used: %s" % rows)
P

# A trial whose GPU memory is held by a detached descendant (setsid): the
# segment's peak counts it (relish attributes NVML's processes by the
# segment's confinement unit, not its process group), and the descendant
# ends with the segment.
cat >"$work/gc_trial.sh" <<'T'
# The GPU user is a setsid child; the trial itself holds no GPU memory.
work=$1
dev=${CUDA_VISIBLE_DEVICES##*-}
setsid /bin/sh -c 'echo "$1 $$ 1500" >>"$2/state"; echo $$ >"$2/gc.pid"; exec sleep 300' sh "$dev" "$work" \
  </dev/null >/dev/null 2>&1 &
sleep 1
echo "RELISH epoch=1 accuracy=1"
T
cat >"$work/gc.yaml" <<S
name: gpugc
objective: {metric: accuracy, mode: max}
search:
  algorithm: grid
  space:
    x: {type: choice, values: [1]}
trial:
  command: ["/bin/sh", "$work/gc_trial.sh", "$work"]
  resources: {gpus: 1, gpu_memory: 2GiB, cpus: 0.1}
S
"$RELISH" run "$work/gc.yaml" --db "$work/gc.db" >"$work/gc.out" 2>"$work/gc.err" \
  || fail "descendant run exited $?: $(tail -5 "$work/gc.err")"
peak=$(sqlite3 "$work/gc.db" "SELECT peak_mem_mib FROM segments")
[ "$peak" = 1500 ] || fail "GPU peak of a trial whose setsid child holds 1500 MiB: $peak ($(cat "$work/state"))"
gc=$(cat "$work/gc.pid")
for _ in $(seq 50); do
  state=$(awk '{print $3}' "/proc/$gc/stat" 2>/dev/null || echo gone)
  { [ "$state" = gone ] || [ "$state" = Z ]; } && break
  sleep 0.05
done
{ [ "$state" = gone ] || [ "$state" = Z ]; } || fail "GPU trial's setsid child $gc outlived it ($state)"

# The same child's memory is its segment's, not others' (foreign use): three
# such trials, two at a time, 3 GiB each on 8 GiB GPUs, packed.  The third
# starts beside the second on GPU 0, which it fits only when the second's
# detached child is counted as the second's and not again as foreign.
cat >"$work/gc3_trial.sh" <<'T'
work=$1
dev=${CUDA_VISIBLE_DEVICES##*-}
setsid /bin/sh -c 'echo "$1 $$ 3000" >>"$2/state"; exec sleep 300' sh "$dev" "$work" \
  </dev/null >/dev/null 2>&1 &
sleep "$2"
echo "RELISH epoch=1 accuracy=1"
T
cat >"$work/gc3.yaml" <<S
name: gpugc3
objective: {metric: accuracy, mode: max}
search:
  algorithm: grid
  max_concurrent: 2
  space:
    s: {type: choice, values: [1.2, 3, 1.5]}
trial:
  command: ["/bin/sh", "$work/gc3_trial.sh", "$work", "{s}"]
  resources: {gpus: 1, gpu_memory: 3GiB, cpus: 0.1}
sharing: {policy: pack}
S
"$RELISH" run "$work/gc3.yaml" --db "$work/gc3.db" >"$work/gc3.out" 2>"$work/gc3.err" \
  || fail "foreign descendants run exited $?: $(tail -5 "$work/gc3.err")"
devs=$(sqlite3 "$work/gc3.db" "SELECT group_concat(device, ' ') FROM (SELECT device FROM segments ORDER BY id)")
[ "$devs" = "GPU-fake-0 GPU-fake-0 GPU-fake-0" ] ||
  fail "a segment's detached child counted as foreign use: devices $devs ($(sqlite3 "$work/gc3.db" "SELECT kind, message FROM events WHERE kind LIKE 'segment.wait%'"))"
echo "test_run_gpu: ok"
