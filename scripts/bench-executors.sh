#!/usr/bin/env bash
# bench-executors.sh BUILD_DIR [TRIALS] - what running trials in containers
# costs `relish run`, against processes, in one command (docs/containers.md,
# "Costs"):
#   1. per segment: bench_container's medians of 20 one-epoch ctrial
#      segments with the process and the podman executor (skipped when
#      BUILD_DIR has no bench_container);
#   2. the digits workload end to end: examples/digits/digits.yaml and
#      digits-podman.yaml, identical but for the executor, each cut to
#      TRIALS trials (default 16; the specs' 64 take long on 2 cores), run
#      with `relish run` into fresh databases; prints both wall times, their
#      ratio and each run's best accuracy, and checks that no container is
#      left.
# Needs podman, runc, python3-torch, python3-sklearn (scripts/deps.sh all).
set -euo pipefail
build=${1:?usage: scripts/bench-executors.sh BUILD_DIR [TRIALS]}
trials=${2:-16}
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
relish="$build/relish"
[ -x "$relish" ] || { echo "bench-executors: $relish not found (build first)" >&2; exit 1; }
export CONTAINERS_CONF="$here/scripts/containers.conf"
"$here/scripts/podman-image.sh"
work=$(mktemp -d /tmp/relish-bench-exec-XXXXXX)
trap 'rm -rf "$work"' EXIT

if [ -x "$build/bench_container" ]; then
  echo "== per segment (bench_container 20 --no-digits)"
  RELISH_SRC="$here" RELISH_BUILD="$build" "$build/bench_container" 20 --no-digits
fi

echo "== digits, $trials trials, ASHA 1-27, 2 at a time, worker mode"
declare -A wall
for kind in process podman; do
  src="$here/examples/digits/digits.yaml"
  [ "$kind" = podman ] && src="$here/examples/digits/digits-podman.yaml"
  # Same folder as the original, so workdir and mounts resolve the same.
  spec="$here/examples/digits/.bench-$kind-$$.yaml"
  sed -e "s/^  max_trials: .*/  max_trials: $trials/" -e "s/^name: .*/name: bench-$kind/" "$src" >"$spec"
  t0=$(date +%s.%N)
  rc=0
  "$relish" run "$spec" --db "$work/$kind.db" --quiet >"$work/$kind.out" 2>"$work/$kind.err" || rc=$?
  t1=$(date +%s.%N)
  rm -f "$spec"
  [ "$rc" = 0 ] || { echo "bench-executors: $kind run failed ($rc): $(tail -3 "$work/$kind.err")" >&2; exit 1; }
  wall[$kind]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
  best=$(sed -n 's/.*accuracy = \([0-9.]*\).*/\1/p' "$work/$kind.out" | head -1)
  segs=$(/usr/bin/python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(
    \"SELECT count(*) FROM segments WHERE status='completed'\").fetchone()[0])" "$work/$kind.db")
  printf '%-8s wall %7.1f s  segments %3s  best accuracy %s\n' "$kind" "${wall[$kind]}" "$segs" "$best"
done
awk -v p="${wall[podman]}" -v q="${wall[process]}" 'BEGIN { printf "ratio podman/process: %.2fx\n", p / q }'
left=$(podman ps -a -q --filter label=relish.experiment=bench-podman | wc -l)
echo "containers left: $left"
[ "$left" = 0 ]
