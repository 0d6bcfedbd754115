#!/usr/bin/env bash
# test_examples.sh - every example spec runs as documented (issue 15 item
# 8), shortened: each examples/*/*.yaml is read back through `relish
# validate --json` (itself a spec), cut to 3 trials, 2 at a time and a
# schedule of at most 3 epochs, and run with the real binary on the host
# (a devices file of 4 CPUs, 4 GiB): it must exit 0 with a best trial.
# ctrial's specs name build/release/ctrial; here the test build's ctrial
# stands in.  The container examples need podman, and skip visibly where
# podman cannot run (tests/support/nested-skip.sh); the Python ones need
# python3-torch and python3-sklearn (scripts/deps.sh test installs them).
# The Slurm examples need a cluster: tests/test_run_slurm.sh runs
# ctrial-slurm.yaml on a private one; they are skipped here, visibly.
set -euo pipefail
: "${RELISH:?path of the relish binary}" "${RELISH_BUILD:?build directory}" "${RELISH_SRC:?source dir}"
PY=/usr/bin/python3
work=$(mktemp -d /tmp/relish-test-examples-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset RELISH_DEVICES CUDA_MPS_PIPE_DIRECTORY
export CONTAINERS_CONF="$RELISH_SRC/scripts/containers.conf"
printf 'host:\n  memory: 4GiB\n  cpus: 4\n' >"$work/devices.yaml"
$PY -c 'import torch, sklearn' 2>/dev/null ||
  fail "python3-torch and python3-sklearn are needed for the examples (scripts/deps.sh test)"

containers=unknown
ran=0 skipped=0
for spec in "$RELISH_SRC"/examples/*/*.yaml; do
  name=$(basename "$spec" .yaml)
  if grep -Eq '^ *executor: *slurm' "$spec"; then
    # A Slurm cluster of its own: tests/test_run_slurm.sh brings one up and
    # runs ctrial-slurm.yaml there; scripts/bench-slurm.sh runs digits-slurm.
    echo "SKIP: example $name: needs a Slurm cluster (tests/test_run_slurm.sh, scripts/bench-slurm.sh)"
    skipped=$((skipped + 1))
    continue
  fi
  if grep -Eq '^ *executor: *(podman|docker)' "$spec"; then
    if [ "$containers" = unknown ]; then
      containers=yes
      out=$("$RELISH_SRC/tests/support/nested-skip.sh" podman) || { containers=no; why=$out; }
      [ "$containers" = yes ] && "$RELISH_SRC/scripts/podman-image.sh"
    fi
    if [ "$containers" = no ]; then
      echo "SKIP: example $name: ${why#SKIP: }"
      skipped=$((skipped + 1))
      continue
    fi
  fi
  "$RELISH" validate --json "$spec" >"$work/$name.full.json" || fail "$name: validate --json"
  $PY - "$work/$name.full.json" "$work/$name.json" "$RELISH_BUILD" <<'P'
import json, os, sys
s = json.load(open(sys.argv[1]))
build = sys.argv[3]
s["search"]["max_trials"] = 3
s["search"]["max_concurrent"] = 2
s["search"]["n_startup"] = 2
sc = s["schedule"]
if sc["algorithm"] != "none":
    sc["max"] = min(sc["max"], 3)
    sc["min"] = min(sc["min"], sc["max"])
    sc["segment"] = 0
t = s["trial"]
argv0 = t["command"][0]
if "build/release/ctrial" in argv0:      # the documented build's program
    t["command"][0] = os.path.join(build, "ctrial")
t["timeout"] = 300
json.dump(s, open(sys.argv[2], "w"), indent=2)
P
  start=$(date +%s)
  if ! "$RELISH" run "$work/$name.json" --db "$work/$name.db" --devices "$work/devices.yaml" \
       >"$work/$name.out" 2>"$work/$name.err"; then
    fail "$name: relish run exited $?: $(tail -5 "$work/$name.err")"
  fi
  sname=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["name"])' "$work/$name.json")
  grep -q "^$sname: trial [0-9]* (index" "$work/$name.out" || fail "$name: no best trial: $(cat "$work/$name.out")"
  echo "ok $name ($(( $(date +%s) - start )) s)"
  ran=$((ran + 1))
done
[ "$ran" -ge 5 ] || fail "only $ran example specs ran"
echo "ok: $ran example specs ran (shortened), $skipped skipped"
