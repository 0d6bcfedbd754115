#!/usr/bin/env bash
# demo.sh BUILD_DIR - the README's main command: run the digits experiment
# (examples/digits/digits.yaml: TPE + ASHA over small PyTorch models on
# sklearn's digits, CPU) with the relish binary of BUILD_DIR, then print its
# best trial.  State goes to ./relish-demo.db (logs and checkpoints to
# ./relish-runs/ next to it); running it again resumes or, when finished,
# prints the best again.  RELISH_DEMO_DB chooses another database.
set -euo pipefail
build=${1:?usage: scripts/demo.sh BUILD_DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
relish="$build/relish"
[ -x "$relish" ] || { echo "demo.sh: $relish not found (build first: make build)" >&2; exit 1; }
db=${RELISH_DEMO_DB:-relish-demo.db}
start=$(date +%s)
"$relish" run "$here/examples/digits/digits.yaml" --db "$db"
echo "demo: finished in $(( $(date +%s) - start )) s; state in $db (try: $relish trials --db $db)"
