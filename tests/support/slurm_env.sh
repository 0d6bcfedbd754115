# slurm_env.sh - sourced by the tests that need a real Slurm: makes the
# test's scratch folder ($work, removed on exit unless KEEP is set), brings
# up a private two-node Slurm in $work/slurm with scripts/slurm-up.sh
# (stand-in GPUs: gpu:2,shard:8 per node) and exports its SLURM_CONF;
# stops it on exit (scripts/slurm-down.sh).  Its nodes are $N1 and $N2,
# names of this run's own (Slurm names its cgroups by node, and other
# builds' tests may run a Slurm at the same time).  When Slurm or munge is not
# installed, or cannot run here, the test is skipped (exit 77, which ctest
# reports as skipped, with the reason).  Defines fail() and
# relish_jobs() (this test's relish jobs squeue still lists as active).
#   usage: . "$RELISH_SRC/tests/support/slurm_env.sh" NAME
: "${RELISH:?path of the relish binary}" "${RELISH_BUILD:?build directory}" "${RELISH_SRC:?source dir}"
work=$(mktemp -d "/tmp/relish-test-${1:-slurm}-XXXXXX")
pids=()
slurm_cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  "$RELISH_SRC/scripts/slurm-down.sh" "$work/slurm" >/dev/null 2>&1 || true
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap slurm_cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  [ -z "${SLURM_CONF:-}" ] || squeue -t all -o '%i %j %T %r %N' >&2 || true
  exit 1
}
unset RELISH_DEVICES CUDA_MPS_PIPE_DIRECTORY SLURM_JOB_ID
export SLURM_UP_NODE_PREFIX="t$$n"
N1=${SLURM_UP_NODE_PREFIX}1
N2=${SLURM_UP_NODE_PREFIX}2
up_rc=0
up=$("$RELISH_SRC/scripts/slurm-up.sh" "$work/slurm" 2>"$work/slurm-up.err") || up_rc=$?
if [ "$up_rc" = 3 ]; then
  echo "SKIP: no Slurm to test with: $(cat "$work/slurm-up.err")"
  exit 77
fi
[ "$up_rc" = 0 ] || fail "scripts/slurm-up.sh failed (exit $up_rc): $(tail -5 "$work/slurm-up.err")"
eval "$up"
export SLURM_CONF
# Jobs of relish still pending or running (any experiment of this test).
relish_jobs() { squeue -h -o '%i %j %T' | grep ' relish-' || true; }
