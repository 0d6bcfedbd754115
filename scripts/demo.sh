#!/usr/bin/env bash
# demo.sh - the README's first command, on a bare Debian 12 as on a
# developer's machine: install what is missing (scripts/deps.sh demo:
# compiler, make, cmake, the C libraries, PyTorch, scikit-learn), build the
# relish binary and its relish-runas helper (build/release/; no tests, no
# benchmarks), run
# the digits experiment (examples/digits/digits.yaml: TPE + ASHA over small
# PyTorch models on sklearn's digits, CPU) and print its best trial.
# State goes to ./relish-demo.db (logs and checkpoints to ./relish-runs/
# next to it); running it again resumes or, when finished, prints the best
# again.  `make demo` runs this script.
# Env: RELISH_DEMO_DB (another database), BUILD (another build folder),
#      JOBS (parallel compile jobs).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
start=$(date +%s)
"$here/scripts/deps.sh" demo
# relish-runas too: `relish serve` (README, "Using it") runs each trial as
# its submitter through it, and finds it beside relish.
RELISH_BENCH=OFF "$here/scripts/build.sh" release relish relish-runas
build=${BUILD:-build/release}
case "$build" in /*) ;; *) build=$here/$build ;; esac
relish=$build/relish
db=${RELISH_DEMO_DB:-relish-demo.db}
run_start=$(date +%s)
"$relish" run "$here/examples/digits/digits.yaml" --db "$db"
end=$(date +%s)
shown=$relish
[ "$relish" = "$here/build/release/relish" ] && [ "$PWD" = "$here" ] && shown=build/release/relish
echo "demo: done in $(( end - start )) s (the experiment $(( end - run_start )) s); state in $db"
echo "demo: the binary is $shown (make install puts it on PATH); try: $shown trials --db $db"
