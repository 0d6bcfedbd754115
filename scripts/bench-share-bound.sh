#!/usr/bin/env bash
# bench-share-bound.sh [REPS] - the best wall time any schedule could reach
# on scripts/bench-share.sh's workloads, from what co-location measurably
# costs on the stand-in: how far relish is from the best, and whether a
# goal is reachable at all.
# Each set of trials that can share one device is run together on one
# stand-in engine (tests/support/gpu_engine_trial.sh, one 4-step epoch
# each, REPS times, default 2, the shortest kept), and the durations give
# a lower bound by linear programming duality: a price per segment of
# each kind such that no set earns more than 1 per second of a device;
# any schedule then needs at least the sum of the prices in
# device-seconds, and a wall time of that over the 2 devices.  Sets
# that memory would forbid are measured too: they can only lower the
# bound, never make it wrong.  A 2,600 MiB segment shares with nothing
# (reserved 2,600 x 1.2 + 256 = 3,376 MiB under relish's default margin
# and floor, src/sched/estimate.c; the smallest other needs 856 of the 720
# MiB left), so it costs its time alone.  Not a test: a benchmark
# (docs/benchmarks.md).
set -euo pipefail
reps=${1:-2}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/relish-bench-bound-XXXXXX)
trap 'rm -rf "$work"' EXIT

# set KIND... -> one line per member: KIND SECONDS
set_once() {
	local st=$work/state k
	: >"$st"
	rm -f "$st".engine.*
	for k in "$@"; do
		(
			s=$(date +%s.%N)
			CUDA_VISIBLE_DEVICES=GPU-fake-0 RELISH_GPU_MEMORY_MIB=4096 \
				RELISH_RESOURCE_FROM=0 RELISH_RESOURCE_TO=1 \
				sh "$here/tests/support/gpu_engine_trial.sh" "$k" 100 "$st" >/dev/null
			e=$(date +%s.%N)
			echo "$k $s $e"
		) &
	done
	wait
}

sets=("heavy" "light" "heavy heavy" "heavy light" "light light" "light light light"
	"light light light light" "heavy light light" "heavy heavy light"
	"free" "free free" "free free free" "free free free free")
for set in "${sets[@]}"; do
	for _ in $(seq 1 "$reps"); do
		# shellcheck disable=SC2086 # a set is words
		set_once $set | awk -v set="$set" '{printf "%s|%s|%.3f\n", set, $1, $3 - $2}'
	done
done >"$work/times"

/usr/bin/python3 - "$work/times" <<'P'
import collections, sys
# set -> kind -> the durations of its members of that kind, shortest over
# the repetitions (a shorter time only lowers the bound)
best = {}
for line in open(sys.argv[1]):
    s, kind, t = line.strip().split("|")
    runs = best.setdefault(s, {})
    runs.setdefault(kind, []).append(float(t))
sets = {}
for s, kinds in best.items():
    n = collections.Counter(s.split())
    sets[s] = {k: sorted(v)[:n[k]] for k, v in kinds.items()}
for s, m in sets.items():
    print(f"  {s:25s} " + ", ".join(f"{k} " + " ".join(f"{t:.2f}" for t in v) for k, v in m.items()))

def bound(kinds, counts, usable):
    """max sum counts[k] * p[k] over p >= 0 with sum over each usable set's
    members of p[kind] / duration <= 1 (two kinds: a grid on the first)."""
    a, b = kinds
    rates = []
    for s in usable:
        m = sets[s]
        rates.append((sum(1 / t for t in m.get(a, [])), sum(1 / t for t in m.get(b, []))))
    top = min(1 / ra for ra, rb in rates if ra > 0 and rb == 0)
    found = (0, 0, 0)
    for i in range(0, 2001):
        pa = top * i / 2000
        pb = min(((1 - pa * ra) / rb for ra, rb in rates if rb > 0), default=0)
        if any(pa * ra + pb * rb > 1 + 1e-9 for ra, rb in rates) or pb < 0:
            continue
        v = counts[a] * pa + counts[b] * pb
        if v > found[0]:
            found = (v, pa, pb)
    return found

alone = {k: sets[k][k][0] for k in ("heavy", "light", "free")}
# cost: 12 trials x 4 segments: 2,600 MiB ones (8 heavy, 8 light
# segments) alone, and 16 heavy and 16 light segments of 500 or 1,200 MiB
cost_sets = [s for s in sets if "free" not in s]
v, ph, pl = bound(("heavy", "light"), {"heavy": 16, "light": 16}, cost_sets)
dev_s = 8 * alone["heavy"] + 8 * alone["light"] + v
excl = (24 * alone["heavy"] + 24 * alone["light"]) / 2
print(f"cost: a heavy segment costs at least {ph:.2f} s of a device, a light one {pl:.2f} s beside others "
      f"(alone {alone['heavy']:.2f} / {alone['light']:.2f} s); no schedule beats {dev_s / 2:.1f} s: "
      f"{excl / (dev_s / 2):.2f}x exclusive's {excl:.1f} s at best")
# free: 16 segments of 2,600 MiB alone; 16 of 500 MiB (856 reserved) and
# 16 of 1,200 (1,696) in the sets memory allows, at the measured time of
# that many free trials together (sharing itself costs nothing)
F = [sets["free"]["free"][0]] + [max(sets[" ".join(["free"] * k)]["free"]) for k in (2, 3, 4)]
fits = [(a, b) for a in range(3) for b in range(5) if 0 < a + b and 1696 * a + 856 * b <= 4096]
p12 = p5 = 0
for i in range(0, 2001):
    a = F[1] / 2 * i / 2000  # price of a 1,200 MiB segment
    b = min((F[n12 + n5 - 1] - n12 * a) / n5 for n12, n5 in fits if n5)
    if all(n12 * a + n5 * b <= F[n12 + n5 - 1] + 1e-9 for n12, n5 in fits) and 16 * (a + b) > 16 * (p12 + p5):
        p12, p5 = a, b
dev_s = 16 * F[0] + 16 * (p12 + p5)
excl = 48 * F[0] / 2
print(f"free: no schedule beats {dev_s / 2:.1f} s: {excl / (dev_s / 2):.2f}x exclusive's {excl:.1f} s at best "
      f"(each device's 2,600 MiB segments alone, the others packed by memory)")
P
