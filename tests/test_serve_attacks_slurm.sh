#!/usr/bin/env bash
# test_serve_attacks_slurm.sh - the attacks of test_serve_attacks.sh that
# reach Slurm, against relish serve with a slurm: section as its default
# executor on a real private two-node Slurm (scripts/slurm-up.sh) and real
# Unix users made for the test ($U1 attacks, $U2 is the victim; skipped,
# saying why, where Slurm cannot run or users cannot be made).  Each case
# asserts that the attack fails and that the victim's experiment, submitted
# just before, completes every trial.  Cases (ATTACKS= picks some):
#   env    trial.env LD_PRELOAD: sbatch is started as the submitter through
#          relish-runas; the library must be loaded by the attacker's
#          sbatch and trial only, never by anything running as root
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/serve-lib.sh"
. "$here/support/attack-lib.sh"
serve_lib_init serve-attacks-slurm
export ASAN_OPTIONS=detect_leaks=0
serve_users 2

unset SLURM_JOB_ID CUDA_MPS_PIPE_DIRECTORY
export SLURM_UP_NODE_PREFIX="a$$n"
cleanup() {
  if [ -n "${spid:-}" ]; then kill -9 "$spid" 2>/dev/null || true; spid=; fi
  "$RELISH_SRC/scripts/slurm-down.sh" "$work/slurm" >/dev/null 2>&1 || true
  serve_lib_cleanup
}
trap cleanup EXIT
up_rc=0
up=$("$RELISH_SRC/scripts/slurm-up.sh" "$work/slurm" 2>"$work/slurm-up.err") || up_rc=$?
if [ "$up_rc" = 3 ]; then
  echo "SKIP: no Slurm to test with: $(cat "$work/slurm-up.err")"
  exit 77
fi
[ "$up_rc" = 0 ] || fail "scripts/slurm-up.sh failed (exit $up_rc): $(tail -5 "$work/slurm-up.err")"
eval "$up"
export SLURM_CONF
chmod 755 "$work/slurm"
relish_jobs() { squeue -h -o '%i %u %j %T' | grep ' relish-' || true; }

cat >"$work/config.yaml" <<C
slurm:
  default: true
  gpu_memory: 16GiB
  poll_interval: 0.2s
C
serve_start --config "$work/config.yaml"
VICTIM_EXTRA='  env: {ASAN_OPTIONS: "detect_leaks=0"}'

# ---- env: trial.env reaching sbatch, which root starts through relish-runas ----
attack_env() {
  victim_start
  evil_so
  aspec "$work/env.yaml" attack-env-slurm 2 1 10 \
    "  env: {LD_PRELOAD: \"$work/evil.so\", EVIL_DIR: \"$work/pwn\", ASAN_OPTIONS: \"verify_asan_link_order=0:detect_leaks=0\"}"
  as "$U1" "$R" submit env.yaml --follow >"$work/env.out" 2>&1 || fail "submit env.yaml: $(cat "$work/env.out")"
  if ls "$work/pwn" | grep -q '^euid-0\.'; then
    fail "trial.env's LD_PRELOAD ran as root on the Slurm path: $(ls "$work/pwn")"
  fi
  ls "$work/pwn" | grep -q "^euid-$UID1\." || fail "the trial did not get its environment: $(ls "$work/pwn")"
  victim_ok
}

all="env"
for c in ${ATTACKS:-$all}; do run_case "$c"; done
attack_summary || exit 1
serve_stop
[ -z "$(relish_jobs)" ] || fail "relish jobs left at the end: $(relish_jobs)"
