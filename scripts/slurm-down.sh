#!/usr/bin/env bash
# slurm-down.sh STATE_DIR - stop the private Slurm that scripts/slurm-up.sh
# started from STATE_DIR: its jobs are cancelled, then its slurmd nodes,
# slurmctld and munged are stopped, each by the pid its own pid file names.
# The folder stays (logs, job-completion file); remove it yourself.
# Stopping an instance that is not running is not an error.
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
# Job steps still in flight belong to the nodes just stopped: their
# slurmstepd processes name this folder's spool on their command line... no:
# they are found by the spool folder they keep open.
for pid in $(ls /proc | grep -E '^[0-9]+$'); do
	cwd=$(readlink "/proc/$pid/cwd" 2>/dev/null) || continue
	exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
	[[ $exe == */slurmstepd && $cwd == "$S"/spool/* ]] && kill -9 "$pid" 2>/dev/null
done
exit 0
