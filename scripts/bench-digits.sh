#!/usr/bin/env bash
# bench-digits.sh - the digits benchmark: relish against Optuna 3.1 on the
# same PyTorch objective (examples/digits/train.py), in one command.
#
# For each variant (mlp: examples/digits/digits-mlp.yaml, cnn:
# examples/digits/digits-cnn.yaml; 64 trials, TPE, early stopping over 1..27
# epochs, 2 at a time) it runs
#   optuna  bench/optuna_digits.py SPEC: TPESampler + HyperbandPruner, two
#           processes sharing a JournalFileStorage, 1 thread each;
#   relish  relish run SPEC --db FRESH --quiet (TPE + ASHA, the spec's mode);
# and prints wall time, epochs trained (relish: sum of resource_to -
# resource_from over completed segments), best accuracy (best completed
# trial), epochs per second (throughput, which separates the executor's
# speed from the early-stopping rule's budget), the time ratio relish/optuna
# and the goals of the issue:
#   mlp: relish time <= 1.0x Optuna's;  cnn: <= 0.6x;
#   best accuracy no more than 0.5 points below Optuna's.
#
# Usage: scripts/bench-digits.sh [BUILD_DIR]      (default build/release)
#   VARIANTS="mlp cnn"  which variants (VARIANTS=mlp: about a minute)
#   REPEAT=1            runs per tool and variant; medians are printed.  The
#                       default is 1 because one repeat of both variants
#                       takes 2-5 minutes on 2 cores; timings on a shared
#                       machine are noisy, so prefer REPEAT=3 when quiet.
#   SCHEDULE=hyperband  run relish with this schedule.algorithm instead of the
#                       spec's (asha): Hyperband against Hyperband trains
#                       about as many epochs as Optuna, ASHA about half
#   SKIP_BUILD=1        use BUILD_DIR as it is
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build/release}
VARIANTS=${VARIANTS:-mlp cnn}
REPEAT=${REPEAT:-1}
PY=/usr/bin/python3

if [ "${SKIP_BUILD:-0}" != 1 ]; then
	cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build "$BUILD" -j 2 --target relish >/dev/null
fi
RELISH=$(realpath "$BUILD/relish")
$PY -c 'import torch, sklearn, optuna' 2>/dev/null ||
	{ echo "bench-digits: needs python3-torch python3-sklearn python3-optuna (scripts/deps.sh bench)" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "bench-digits: sqlite3 missing (scripts/deps.sh test)" >&2; exit 2; }

tmp=$(mktemp -d /tmp/relish-bench-digits-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
results="$tmp/results.tsv"   # tool variant wall epochs best
: >"$results"

now() { date +%s.%N; }

run_relish() { # variant spec rep
	# A folder per run: runs of one experiment name must not share the
	# runs folder (a fresh database would pick up the old checkpoints).
	local dir="$tmp/relish-$1-$3" t0 t1 epochs best
	local db="$dir/relish.db"
	mkdir -p "$dir"
	t0=$(now)
	if ! "$RELISH" run "$2" --db "$db" --runs-dir "$dir/runs" --quiet >"$dir/relish.out" 2>"$dir/relish.err"; then
		local keep
		keep=$(mktemp -d /tmp/relish-bench-digits-failed-XXXXXX)
		cp -r "$dir"/. "$keep/" 2>/dev/null || true
		echo "bench-digits: relish run $2 failed (database, logs and output kept in $keep):" >&2
		tail -n 20 "$dir/relish.err" >&2
		return 1
	fi
	t1=$(now)
	epochs=$(sqlite3 "$db" "SELECT COALESCE(sum(resource_to - resource_from), 0) FROM segments WHERE status = 'completed'")
	best=$(sqlite3 "$db" "SELECT COALESCE(max(objective), 'nan') FROM trials WHERE status = 'completed'")
	printf 'relish\t%s\t%s\t%s\t%s\n' "$1" "$(awk -v a="$t1" -v b="$t0" 'BEGIN {print a - b}')" \
		"$epochs" "$best" >>"$results"
	echo "  relish  $1 #$3: $(tail -n1 "$results" | cut -f3- | awk -F'\t' '{printf "wall %.2f s, %d epochs, best %.4f", $1, $2, $3}')"
}

run_optuna() { # variant spec rep
	local j
	j=$($PY bench/optuna_digits.py "$2" --json --journal "$tmp/optuna-$1-$3.log")
	$PY -c 'import json,sys; d=json.loads(sys.argv[1]); print("optuna\t%s\t%.3f\t%d\t%.6f" % (sys.argv[2], d["wall_s"], d["epochs"], d["best_accuracy"]))' \
		"$j" "$1" >>"$results"
	echo "  optuna  $1 #$3: $(tail -n1 "$results" | cut -f3- | awk -F'\t' '{printf "wall %.2f s, %d epochs, best %.4f", $1, $2, $3}')"
}

echo "bench-digits: variants '$VARIANTS', REPEAT=$REPEAT, relish schedule ${SCHEDULE:-from the spec}; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for v in $VARIANTS; do
	case "$v" in
	mlp) spec=examples/digits/digits-mlp.yaml ;;
	cnn) spec=examples/digits/digits-cnn.yaml ;;
	*) echo "bench-digits: unknown variant '$v' (mlp, cnn)" >&2; exit 2 ;;
	esac
	if [ -n "${SCHEDULE:-}" ]; then
		# A copy with the other schedule; workdir made absolute for the copy.
		sed -e "s/^  algorithm: asha\$/  algorithm: $SCHEDULE/" \
			-e "s#^  workdir: \.\$#  workdir: $PWD/examples/digits#" "$spec" >"$tmp/$v.yaml"
		grep -q "^  algorithm: $SCHEDULE\$" "$tmp/$v.yaml" ||
			{ echo "bench-digits: could not set schedule $SCHEDULE in $spec" >&2; exit 2; }
		spec="$tmp/$v.yaml"
	fi
	for r in $(seq 1 "$REPEAT"); do
		run_optuna "$v" "$spec" "$r"
		run_relish "$v" "$spec" "$r"
	done
done

$PY - "$results" "$REPEAT" <<'EOF'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
goal_time = {"mlp": 1.0, "cnn": 0.6}
print("\ndigits benchmark (median of %s run(s) each; load %s)" % (sys.argv[2], open("/proc/loadavg").read().split()[0]))
print("%-8s %-7s %9s %8s %9s %8s %8s" % ("variant", "tool", "wall s", "epochs", "epochs/s", "best", "ratio"))
for v in dict.fromkeys(r[1] for r in rows):
    med = {}
    for tool in ("optuna", "relish"):
        rs = [r for r in rows if r[0] == tool and r[1] == v]
        med[tool] = [statistics.median(float(r[i]) for r in rs) for i in (2, 3, 4)]
    ratio = med["relish"][0] / med["optuna"][0]
    for tool in ("optuna", "relish"):
        w, e, b = med[tool]
        print("%-8s %-7s %9.2f %8d %9.1f %8.4f %8s" % (v, tool, w, e, e / w, b,
                                                   "%.2fx" % ratio if tool == "relish" else ""))
    gt = goal_time[v]
    t_ok = ratio <= gt
    a_ok = med["relish"][2] >= med["optuna"][2] - 0.005
    print("  goal %s: time <= %.1fx Optuna's: %s (%.2fx); best accuracy within 0.5 points: %s (%+.2f points)"
          % (v, gt, "PASS" if t_ok else "MISS", ratio, "PASS" if a_ok else "MISS",
             100 * (med["relish"][2] - med["optuna"][2])))
EOF
