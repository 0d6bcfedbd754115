#!/usr/bin/env bash
# bench-share.sh BUILD_DIR [RUNS] - sharing stand-in GPUs live (issue 26's
# goals): `relish run` with sharing.policy relish against exclusive, on two
# stand-in GPUs of 4 GiB whose NVML (tests/support/libnvidia-ml-standin.c,
# `busy`) reports every running process 100 % busy, as real time-based
# utilisation does.  12 trials of 500, 1,200 and 2,600 MiB
# (tests/support/gpu_engine_trial.sh, 4 one-epoch segments of 1 s alone),
# max_concurrent 8, a grid so both policies run the same trials:
#   free   co-location costs nothing (no engine): goal relish >= 1.5x
#   cost   half light, half heavy trials sharing each device's exclusive
#          engine (two heavy ones lose by sharing): goal >= 1.4x
# Each mode and policy RUNS times (default 3), alternating, each into a
# fresh database; prints every run's wall time (first segment start to
# last end, from the store), the medians, their ratio, the failed trials,
# the most segments a device held at once and, for cost, the seconds two
# heavy trials shared a device.  Not a test: a benchmark (docs/benchmarks.md).
set -euo pipefail
build=${1:?usage: scripts/bench-share.sh BUILD_DIR [RUNS]}
runs=${2:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
relish=$build/relish
[ -x "$relish" ] || { echo "bench-share: $relish not found (build first)" >&2; exit 1; }
work=$(mktemp -d /tmp/relish-bench-share-XXXXXX)
trap 'rm -rf "$work"' EXIT
# the NVML stand-in, built here (the release build has no tests)
cc -shared -fPIC -O2 -I"$here/src" "$here/tests/support/libnvidia-ml-standin.c" \
	-o "$work/libnvidia-ml-standin.so"
unset RELISH_DEVICES CUDA_MPS_PIPE_DIRECTORY
export RELISH_HOST_MEMORY=8GiB RELISH_HOST_CPUS=2
export RELISH_NVML_LIBRARY=$work/libnvidia-ml-standin.so

one() { # MODE POLICY I -> the run's folder
	local mode=$1 policy=$2 i=$3 d kinds
	d=$work/$mode-$policy-$i
	mkdir -p "$d"
	: >"$d/state"
	printf 'driver 550.54.15\ndevice GPU-fake-0 4096 NVIDIA Stand-in 4GB\ndevice GPU-fake-1 4096 NVIDIA Stand-in 4GB\nstate %s\nbusy\n' \
		"$d/state" >"$d/nvml"
	kinds="[free]"
	[ "$mode" = cost ] && kinds="[light, heavy]"
	reps="[1, 2]"
	[ "$mode" = free ] && reps="[1, 2, 3, 4]"
	cat >"$d/spec.yaml" <<S
name: share-$mode-$policy
objective: {metric: accuracy, mode: max}
search:
  algorithm: grid
  max_trials: 12
  max_concurrent: 8
  space:
    mem: {type: choice, values: [500, 1200, 2600]}
    kind: {type: choice, values: $kinds}
    rep: {type: choice, values: $reps}
schedule: {algorithm: none, resource: epoch, max: 4, segment: 1}
trial:
  command: ["/bin/sh", "$here/tests/support/gpu_engine_trial.sh", "{kind}", "{mem}", "$d/state"]
  resources: {gpus: 1, cpus: 0.1}
  retries: 0
sharing: {policy: $policy}
S
	RELISH_NVML_SCRIPT=$d/nvml "$relish" run "$d/spec.yaml" --db "$d/run.db" --quiet \
		>"$d/out" 2>"$d/err" || echo "bench-share: $mode $policy run $i: relish run exited $? ($(tail -1 "$d/err"))" >&2
	echo "$d"
}

for mode in free cost; do
	dirs=()
	for i in $(seq 1 "$runs"); do
		for policy in exclusive relish; do
			dirs+=("$(one "$mode" "$policy" "$i")")
		done
	done
	/usr/bin/python3 - "$mode" "${dirs[@]}" <<'P'
import sqlite3, statistics, sys
mode, dirs = sys.argv[1], sys.argv[2:]
walls = {"exclusive": [], "relish": []}
for d in dirs:
    policy = d.rsplit("-", 2)[1]
    db = sqlite3.connect(d + "/run.db")
    st = dict(db.execute("SELECT status, count(*) FROM trials GROUP BY status").fetchall())
    wall = db.execute("SELECT max(ended_at) - min(started_at) FROM segments").fetchone()[0]
    most = db.execute("""SELECT max(n) FROM (SELECT count(b.id) n FROM segments a JOIN segments b
        ON b.device = a.device AND b.started_at <= a.started_at AND a.started_at < b.ended_at
        GROUP BY a.id)""").fetchone()[0]
    # seconds two heavy trials' segments ran on one device at once
    hh = db.execute("""SELECT coalesce(sum(min(a.ended_at, b.ended_at) - max(a.started_at, b.started_at)), 0)
        FROM segments a JOIN trials ta ON ta.id = a.trial_id
             JOIN segments b ON b.device = a.device AND b.id > a.id
             JOIN trials tb ON tb.id = b.trial_id
        WHERE a.started_at < b.ended_at AND b.started_at < a.ended_at
          AND ta.params_json LIKE '%"heavy"%' AND tb.params_json LIKE '%"heavy"%'""").fetchone()[0]
    failed = sum(v for k, v in st.items() if k != "completed")
    walls[policy].append(wall)
    print(f"{mode} {policy:9s} {d.rsplit('-', 1)[1]}: {wall:6.1f} s, trials {st}, "
          f"at most {most} per GPU" + (f", heavy beside heavy {hh:.1f} s" if mode == "cost" else ""))
m = {p: statistics.median(v) for p, v in walls.items()}
goal = 1.5 if mode == "free" else 1.4
print(f"{mode}: median exclusive {m['exclusive']:.1f} s, relish {m['relish']:.1f} s: "
      f"relish {m['exclusive'] / m['relish']:.2f}x faster (goal >= {goal}x)")
P
done
