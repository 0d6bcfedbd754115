#!/usr/bin/env bash
# test_serve_attacks.sh - relish serve attacked by one of its users: a real
# service (root), real Unix users made for the test (useradd; skipped,
# saying why, where that is impossible): $U1 is the attacker, $U2 the
# victim.  Each case is one attack of issue 25 and asserts that it fails
# AND that the victim's experiment, submitted just before, runs to its end
# with every trial completed.  Cases (all by default; ATTACKS="env grants"
# picks some):
#   env      trial.env LD_PRELOAD (and ASAN_OPTIONS, so that the sanitized
#            test build's helper would obey it too): the library is loaded
#            by the trial, as the attacker, never by anything running as
#            root (relish-runas starts with an empty environment and
#            applies the trial's after setuid)
# The Slurm path has its own file (test_serve_attacks_slurm.sh), the full
# disk too (test_serve_attacks_disk.sh: a small file system of its own).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/serve-lib.sh"
. "$here/support/attack-lib.sh"
serve_lib_init serve-attacks
serve_users 2
printf 'host:\n  memory: 4GiB\n  cpus: 4\n' >"$work/devices.yaml"
: >"$work/config.yaml"
serve_start --devices "$work/devices.yaml" --config "$work/config.yaml"

# ---- env: trial.env reaching a program root executes ----------------------
attack_env() {
  victim_start
  evil_so
  aspec "$work/env.yaml" attack-env 2 1 10 \
    "  env: {LD_PRELOAD: \"$work/evil.so\", EVIL_DIR: \"$work/pwn\", ASAN_OPTIONS: \"verify_asan_link_order=0\"}"
  as "$U1" "$R" submit env.yaml --follow >"$work/env.out" 2>&1 || fail "submit env.yaml: $(cat "$work/env.out")"
  if ls "$work/pwn" | grep -q '^euid-0\.'; then
    fail "trial.env's LD_PRELOAD ran as root: $(ls "$work/pwn")"
  fi
  ls "$work/pwn" | grep -q "^euid-$UID1\." || fail "the trial did not get its environment: $(ls "$work/pwn")"
  victim_ok
}

all="env"
for c in ${ATTACKS:-$all}; do run_case "$c"; done
attack_summary || exit 1
serve_stop
