#!/usr/bin/env bash
# test_serve_attacks_disk.sh - relish serve's disk attacked by one of its
# users (issue 25, item 4): the service's state folder (database and runs/)
# on a small file system of its own (a tmpfs with size= and nr_inodes=;
# skipped, saying why, where mounting is impossible), real users made for
# the test ($U1 attacks, $U2 is the victim).  Each case asserts that the
# attack fails to stop the service or the victim's experiment, and that the
# victim's experiment completes every trial.  Cases (ATTACKS= picks some):
#   blocks   the attacker's trial fills the file system (the database's
#            too) from its checkpoint folder and holds it, then prints
#            metric lines (the store's writes fail): the service does
#            not exit (it exited through live__fatal before, and refused to
#            restart); the victim's experiment, whose next write fails, is
#            paused, not stopped; the service still answers and stops on
#            SIGTERM (exit 0); it starts again on the full disk (the paused
#            experiments held); the admin frees the space, cancels the
#            attacker's experiment with the service stopped (relish cancel
#            --db: it is not resumed, so it cannot fill the disk again) and
#            starts it again: the victim's experiment completes
#   inodes   the attacker's trial takes every inode: the victim's
#            experiment, submitted then, cannot get a folder for its
#            segments and is paused, not stopped (it was stopped, failed,
#            before); the admin cancels and deletes the attacker's
#            experiment through the running service, which frees the
#            inodes: the victim resumes by itself and completes; while it
#            is paused the victim's --follow says so, and the attacker
#            (read: own) cannot see the experiment or its pause
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/serve-lib.sh"
. "$here/support/attack-lib.sh"
serve_lib_init serve-attacks-disk
serve_users 2
mnt=
cleanup() {
  if [ -n "${spid:-}" ]; then kill -9 "$spid" 2>/dev/null || true; wait "$spid" 2>/dev/null || true; spid=; fi
  for u in "${made_users[@]}"; do pkill -9 -u "$u" 2>/dev/null || true; done
  sleep 0.2
  if [ -n "$mnt" ]; then umount -l "$mnt" 2>/dev/null || true; fi
  serve_lib_cleanup
}
trap cleanup EXIT
# STATE folder: a tmpfs of SIZE and INODES, mode 0711 (as relish serve makes it)
mount_state() {
  mkdir -p "$work/state"
  if ! mount -t tmpfs -o "size=$1,nr_inodes=$2,mode=0711" tmpfs "$work/state" 2>"$work/mount.err"; then
    echo "SKIP: cannot mount a tmpfs for the state folder: $(cat "$work/mount.err")"
    exit 77
  fi
  mnt=$work/state
  trap case_cleanup EXIT
}
# (a case runs in a subshell: what it started and mounted goes with it)
case_cleanup() {
  if [ -n "${spid:-}" ]; then kill -9 "$spid" 2>/dev/null || true; wait "$spid" 2>/dev/null || true; fi
  for u in "${made_users[@]}"; do pkill -9 -u "$u" 2>/dev/null || true; done
  sleep 0.2
  if [ -n "$mnt" ]; then umount -l "$mnt" 2>/dev/null || true; fi
}
unmount_state() {
  for u in "${made_users[@]}"; do pkill -9 -u "$u" 2>/dev/null || true; done
  sleep 0.2
  umount "$work/state" || fail "umount $work/state"
  mnt=
  rmdir "$work/state"
  : >"$work/serve.log"
}
printf 'host:\n  memory: 4GiB\n  cpus: 4\n' >"$work/devices.yaml"
# read: own, so that the attacker's look at the victim's pause is refused too
printf 'grace: 2s\nread: own\n' >"$work/config.yaml"
start() { serve_start --devices "$work/devices.yaml" --config "$work/config.yaml"; }
avail_kib() { df --output=avail -k "$work/state" | tail -1 | tr -d ' '; }
ifree() { df --output=iavail "$work/state" | tail -1 | tr -d ' '; }

# FILE NAME SHELL-COMMAND: one trial of the attacker's that runs the command
attacker_spec() {
  cat >"$1" <<S
name: $2
objective: {metric: accuracy, mode: max}
search: {algorithm: random, seed: 1, max_trials: 1, space: {x: {type: uniform, low: 0.0, high: 1.0}}}
trial:
  command: ["/bin/sh", "-c", "$3"]
  resources: {memory: 32MiB, cpus: 1}
S
  chmod 644 "$1"
}
exp_json() { api "/api/v1/experiments/$1"; }
status_of() { exp_json "$1" | sed -n 's/.*"status":"\([a-z]*\)".*/\1/p' | head -1; }
# true while the service says the experiment is paused for want of space
paused_of() { exp_json "$1" | sed -n 's/.*"paused":\([a-z]*\).*/\1/p' | head -1; }
# the victim: VICTIM experiment of $U2, 3 trials of EPOCHS epochs of MS ms each
victim_submit() {
  aspec "$work/$1.yaml" "$1" 3 "$2" "$3"
  as "$U2" "$R" submit "$1.yaml" >/dev/null || fail "the victim could not submit $1"
  victim=$1
}
paused_logged() { grep -q "$1: paused for want of space" "$work/serve.log"; }

# ---- blocks: the file system full, the database's writes failing -----------
attack_blocks() {
  mount_state 40m 20000
  start
  victim_submit victim-blocks 6 300
  attacker_spec "$work/fill.yaml" attack-fill \
    'dd if=/dev/zero of=$RELISH_CHECKPOINT_DIR/fill bs=1M 2>/dev/null; i=0; while [ $i -lt 3000 ]; do echo RELISH accuracy=0.5; i=$((i+1)); done; exec sleep 600'
  as "$U1" "$R" submit fill.yaml >/dev/null || fail "the attacker could not submit"
  wait_for 60 sh -c "[ \$(df --output=avail -k '$work/state' | tail -1) -lt 64 ]"
  echo "blocks: the state file system has $(avail_kib) KiB left"
  wait_for 60 paused_logged victim-blocks
  kill -0 "$spid" || fail "relish serve exited on a full disk"
  api /api/v1/server | grep -q '"version"' || fail "the service does not answer on a full disk"
  [ "$(status_of victim-blocks)" = running ] || fail "the victim's experiment was stopped: $(exp_json victim-blocks)"
  wait_for 30 sh -c "[ \"\$(\"$R\" status --server 'unix:$sock' victim-blocks 2>/dev/null | awk 'NR==2 {print \$3}')\" = paused ]" ||
    fail "relish status does not say the victim is paused: $("$R" status --server "unix:$sock" victim-blocks 2>&1)"
  [ "$(paused_of victim-blocks)" = true ] || fail "the API does not say the victim is paused: $(exp_json victim-blocks)"
  # (one scrape, read again for a while: on a full disk a scrape may
  # fail now and then, and the message shows the scrape that was read)
  local scrape="" i
  for i in $(seq 20); do
    scrape=$(curl -s --max-time 30 -w '\nHTTP %{http_code}' --unix-socket "$sock" http://relish/metrics || true)
    printf '%s' "$scrape" | grep -Eq '^relish_experiments_paused [1-9]' && break
    echo "blocks: a scrape without the paused count: $(printf '%s' "$scrape" | grep -E '^relish_experiments_paused|^HTTP|error' | head -3 | tr '\n' ' ')"
    sleep 0.5
  done
  printf '%s' "$scrape" | grep -Eq '^relish_experiments_paused [1-9]' ||
    fail "the metrics do not count the paused experiments: $(printf '%s' "$scrape" | grep -E 'relish_experiments|^HTTP|error')"
  kill -TERM "$spid"
  serve_wait_exit 60 "after SIGTERM on a full disk"
  # A start on the full disk: it answers, the experiments wait for space.
  start
  api /api/v1/server | grep -q '"version"' || fail "the restarted service does not answer"
  grep -q 'event=serve.resume.*paused for want of space\|event=serve.resume experiment=victim-blocks' "$work/serve.log" ||
    fail "the restart did not hold or resume the victim"
  kill -TERM "$spid"
  serve_wait_exit 60 "after SIGTERM (the second start, disk full)"
  # The admin: free the space, cancel the attacker's experiment without the
  # service, start it again.
  rm -f "$work"/state/runs/attack-fill.*/trial-*/ckpt/fill
  "$R" cancel --db "$work/state/relish.db" "$U1/attack-fill" || fail "relish cancel --db failed"
  start
  victim_ok 180
  [ "$(status_of "attack-fill?owner=$U1")" = cancelled ] || fail "the attacker's experiment: $(exp_json "attack-fill?owner=$U1")"
  [ "$(avail_kib)" -gt 8192 ] || fail "the disk is full again: $(avail_kib) KiB left"
  kill -TERM "$spid"
  serve_wait_exit 60 "after SIGTERM"
  unmount_state
}

# ---- inodes: every inode taken, the victim's folders failing -----------------
attack_inodes() {
  mount_state 64m 3000
  start
  attacker_spec "$work/inodes.yaml" attack-inodes \
    'cd $RELISH_CHECKPOINT_DIR && seq 1 200000 | xargs touch 2>/dev/null; exec sleep 600'
  as "$U1" "$R" submit inodes.yaml >/dev/null || fail "the attacker could not submit"
  wait_for 60 sh -c "[ \$(df --output=iavail '$work/state' | tail -1) -lt 2 ]"
  echo "inodes: $(ifree) inodes left on the state file system"
  # the victim follows its experiment (relish submit --follow), as a user
  # at a terminal would: told of the pause and of the resume
  aspec "$work/victim-inodes.yaml" victim-inodes 3 2 50
  as "$U2" "$R" submit --follow victim-inodes.yaml >"$work/follow.out" 2>&1 &
  local follower=$!
  victim=victim-inodes
  wait_for 60 paused_logged victim-inodes
  sleep 1
  [ "$(status_of victim-inodes)" = running ] || fail "the victim's experiment was stopped: $(exp_json victim-inodes)"
  [ "$(paused_of victim-inodes)" = true ] || fail "the API does not say the victim is paused: $(exp_json victim-inodes)"
  wait_for 30 grep -q "^victim-inodes: paused for want of space on the service" "$work/follow.out"
  # the attacker, another user of the machine, learns nothing of the
  # victim's experiment or its pause (read: own): not found, not listed
  local c
  c=$(as "$U1" curl -s -w '%{http_code}' --unix-socket "$sock" "http://relish/api/v1/experiments/victim-inodes?owner=$U2")
  [ "${c: -3}" = 404 ] && ! printf '%s' "$c" | grep -q paused ||
    fail "the attacker read the victim's paused experiment: $c"
  as "$U1" curl -s --unix-socket "$sock" "http://relish/api/v1/experiments" | grep -q victim-inodes &&
    fail "the attacker's list shows the victim's experiment"
  as "$U1" "$R" status 2>&1 | grep -q victim-inodes && fail "the attacker's relish status shows the victim's experiment"
  kill -0 "$spid" || fail "relish serve exited without inodes"
  # The admin, through the running service: cancel, then delete (which
  # frees the inodes) once the cancelled segment has stopped.
  "$R" cancel --server "unix:$sock" "$U1/attack-inodes" >/dev/null || fail "the admin's cancel failed"
  local i ok=
  for i in $(seq 100); do
    if "$R" delete --server "unix:$sock" "$U1/attack-inodes" >/dev/null 2>&1; then ok=1; break; fi
    sleep 0.2
  done
  [ -n "$ok" ] || fail "the admin could not delete the attacker's experiment: $("$R" delete --server "unix:$sock" "$U1/attack-inodes" 2>&1)"
  echo "inodes: $(ifree) inodes free after the delete"
  victim_ok 180
  grep -q "victim-inodes: space is free again: resumed" "$work/serve.log" || fail "the victim was not resumed"
  [ "$(paused_of victim-inodes)" = false ] || fail "the victim still shows paused once resumed: $(exp_json victim-inodes)"
  wait "$follower" || fail "relish submit --follow exited $?: $(cat "$work/follow.out")"
  grep -q "^victim-inodes: resumed$" "$work/follow.out" ||
    fail "relish submit --follow did not say the resume: $(cat "$work/follow.out")"
  kill -TERM "$spid"
  serve_wait_exit 60 "after SIGTERM"
  unmount_state
}

all="blocks inodes"
for c in ${ATTACKS:-$all}; do run_case "$c"; done
attack_summary || exit 1
