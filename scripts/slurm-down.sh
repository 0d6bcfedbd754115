#!/usr/bin/env bash
# slurm-down.sh STATE_DIR - stop the private Slurm that scripts/slurm-up.sh
# started from STATE_DIR: its jobs are cancelled, then its slurmd nodes,
# slurmctld and munged are stopped, each by the pid its own pid file names,
# and what is left of its jobs is killed.  The folder stays (logs, the
# job-completion file); remove it yourself.  Stopping an instance that is
# not running is not an error.
set -uo pipefail

[[ $# -eq 1 ]] || { echo "usage: slurm-down.sh STATE_DIR" >&2; exit 2; }
S=$(cd "$1" 2>/dev/null && pwd) || exit 0

pid_of() { [[ -s $1 ]] && cat "$1"; }
stop() {
	local pid
	pid=$(pid_of "$1") || return 0
	kill "$pid" 2>/dev/null || return 0
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null || true
}

if [[ -s $S/slurm.conf ]] && [[ -n $(pid_of "$S/slurmctld.pid") ]]; then
	SLURM_CONF=$S/slurm.conf timeout 10 scancel --full --quiet --user="$(id -un)" 2>/dev/null || true
fi
for f in "$S"/slurmd-*.pid; do
	[[ -e $f ]] && stop "$f"
done
stop "$S/slurmctld.pid"
stop "$S/munge/munged.pid"
# What is left of this instance's jobs (the slurmstepd of a node that was
# killed, the trial under it) has this instance's SLURM_CONF in its
# environment (the daemons were started with it, jobs inherit it) and is a
# slurmstepd or has a SLURM_JOB_ID (the shell that called this script has
# the one but not the other): those processes, and only those, are
# killed, each by its pid.
conf="SLURM_CONF=$S/slurm.conf"
for d in /proc/[0-9]*; do
	pid=${d#/proc/}
	[[ $pid == "$$" ]] && continue
	env=$({ tr '\0' '\n' <"$d/environ"; } 2>/dev/null) || continue
	grep -qxF "$conf" <<<"$env" || continue
	exe=$(readlink "$d/exe" 2>/dev/null) || continue
	[[ $exe == */slurmstepd* ]] || grep -q '^SLURM_JOB_ID=' <<<"$env" || continue
	kill -9 "$pid" 2>/dev/null
done
exit 0
