#!/usr/bin/env bash
# bench-slurm.sh BUILD_DIR [TRIALS] - what running segments as Slurm jobs
# costs `relish run`, against processes and containers, in one command
# (docs/slurm.md, "Costs"; the figures are in docs/benchmarks.md):
#   1. per segment: bench_slurm's medians of 20 one-epoch ctrial segments
#      with the process, podman and slurm executors, and the Slurm parts
#      (submit to start, run, end to relish seeing it);
#   2. the digits workload end to end: examples/digits/digits.yaml as it
#      is (process, worker mode), the same in oneshot mode, and
#      digits-slurm.yaml (oneshot: one job per segment), each cut to TRIALS
#      trials (default 16), with `relish run` into fresh databases; prints
#      the wall times, ratios and each run's best accuracy, and checks that
#      squeue shows no relish job afterwards.
# Slurm: the cluster SLURM_CONF names, else a private one from
# scripts/slurm-up.sh (stopped at the end).  Needs root for the private
# Slurm, python3-torch and python3-sklearn (scripts/deps.sh all), podman
# for the container figure (skipped without).
set -euo pipefail
build=${1:?usage: scripts/bench-slurm.sh BUILD_DIR [TRIALS]}
trials=${2:-16}
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
relish="$build/relish"
[ -x "$relish" ] || { echo "bench-slurm: $relish not found (build first)" >&2; exit 1; }
work=$(mktemp -d /tmp/relish-bench-slurm-XXXXXX)
own=0
cleanup() {
	[ "$own" = 1 ] && "$here/scripts/slurm-down.sh" "$work/slurm" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT
if [ -z "${SLURM_CONF:-}" ]; then
	# The private cluster's two nodes share this machine: their CPUs add
	# up to its own, so trials get the threads they would get here.
	cpus=$(($(nproc) / 2))
	[ "$cpus" -ge 1 ] || cpus=1
	eval "$(SLURM_UP_CPUS=${SLURM_UP_CPUS:-$cpus} SLURM_UP_NODE_PREFIX=${SLURM_UP_NODE_PREFIX:-b$$n} \
		"$here/scripts/slurm-up.sh" "$work/slurm")"
	export SLURM_CONF
	own=1
fi
export CONTAINERS_CONF="$here/scripts/containers.conf"

podman_arg=""
command -v podman >/dev/null || podman_arg=--no-podman
echo "== per segment (bench_slurm 20)"
RELISH_SRC="$here" RELISH_BUILD="$build" "$build/bench_slurm" 20 $podman_arg

echo "== digits, $trials trials, ASHA 1-27, 2 at a time"
declare -A wall
for kind in process-worker process-oneshot slurm; do
	case $kind in
	process-worker) src="$here/examples/digits/digits.yaml"; mode=worker ;;
	process-oneshot) src="$here/examples/digits/digits.yaml"; mode=oneshot ;;
	slurm) src="$here/examples/digits/digits-slurm.yaml"; mode=oneshot ;;
	esac
	# Same folder as the original, so workdir resolves the same.
	spec="$here/examples/digits/.bench-$kind-$$.yaml"
	sed -e "s/^  max_trials: .*/  max_trials: $trials/" -e "s/^name: .*/name: bench-$kind/" \
		-e "s/^  mode: \(worker\|warm\|oneshot\)\$/  mode: $mode/" "$src" >"$spec"
	t0=$(date +%s.%N)
	rc=0
	"$relish" run "$spec" --db "$work/$kind.db" --quiet >"$work/$kind.out" 2>"$work/$kind.err" || rc=$?
	t1=$(date +%s.%N)
	rm -f "$spec"
	[ "$rc" = 0 ] || { echo "bench-slurm: $kind run failed ($rc): $(tail -3 "$work/$kind.err")" >&2; exit 1; }
	wall[$kind]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	best=$(sed -n 's/.*accuracy = \([0-9.]*\).*/\1/p' "$work/$kind.out" | head -1)
	segs=$(/usr/bin/python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(
	  \"SELECT count(*) FROM segments WHERE status='completed'\").fetchone()[0])" "$work/$kind.db")
	printf '%-16s wall %7.1f s  segments %3s  best accuracy %s\n' "$kind" "${wall[$kind]}" "$segs" "$best"
done
awk -v s="${wall[slurm]}" -v o="${wall[process-oneshot]}" -v w="${wall[process-worker]}" \
	'BEGIN { printf "ratio slurm/process-oneshot: %.2fx, slurm/process-worker: %.2fx\n", s / o, s / w }'
left=$(squeue -h -o '%j' | grep -c '^relish-bench-' || true)
echo "relish jobs left in squeue: $left"
[ "$left" = 0 ]
