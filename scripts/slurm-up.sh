#!/usr/bin/env bash
# slurm-up.sh STATE_DIR - a private, real Slurm on this machine for tests and
# demos: munged, slurmctld and two slurmd nodes (n1, n2), each with two
# stand-in GPUs (gres.conf File= entries are symlinks to /dev/null) and
# Gres=gpu:2,shard:8.  Everything lives in STATE_DIR: the munge key and
# socket, slurm.conf, spool and state folders, logs, pid files and the
# job-completion file.  Nothing system-wide is read or changed (no
# /etc/slurm, no /etc/munge, no system munged), so several instances run
# side by side: ports are picked free at bring-up and the first job id is
# random (cgroup paths carry job ids).
#
# Prints the environment to use as export lines:
#     eval "$(scripts/slurm-up.sh DIR)"
# scripts/slurm-down.sh DIR stops it.  Exit status: 0 up; 3 Slurm or munge
# is not installed, or they cannot run here (the message says which; tests
# skip on 3); 1 another failure (the logs under DIR say why).
#
# Settings (environment): SLURM_UP_NODES (2), SLURM_UP_CPUS per node (4),
# SLURM_UP_MEMORY per node in MiB (4096), SLURM_UP_GPUS per node (2),
# SLURM_UP_SHARDS per node (8), SLURM_UP_CGROUP (1: proctrack/task cgroup,
# memory limits enforced by the kernel; 0: linuxproc, limits enforced by
# sampling; default 1 where this machine lets root make a cgroup, else 0:
# a container's read-only /sys/fs/cgroup), SLURM_UP_SLURMD_TIMEOUT (30 s: how long a node that stops
# answering stays up), SLURM_UP_NODE_PREFIX (n: nodes n1, n2, ...; Slurm's
# cgroups are named by node, so instances that run at the same time, as
# tests of several builds do, give their nodes names of their own).  docs/slurm.md describes the cluster this makes.
set -euo pipefail

die() { echo "slurm-up.sh: $*" >&2; exit "${2:-1}"; }

[[ $# -eq 1 ]] || die "usage: slurm-up.sh STATE_DIR" 2
for t in munged mungekey slurmctld slurmd sbatch squeue scontrol scancel; do
	command -v "$t" >/dev/null 2>&1 ||
		die "$t not found: install slurm-wlm and munge (scripts/deps.sh slurm)" 3
done
[[ $(id -u) -eq 0 ]] || die "slurmd must run as root here (it is run as $(id -un))" 3

mkdir -p "$1"
S=$(cd "$1" && pwd)
NODES=${SLURM_UP_NODES:-2}
CPUS=${SLURM_UP_CPUS:-4}
MEM=${SLURM_UP_MEMORY:-4096}
GPUS=${SLURM_UP_GPUS:-2}
SHARDS=${SLURM_UP_SHARDS:-8}
# Slurm's cgroup plugins need a hierarchy root can write: freezer where
# cgroup v1 is mounted (what Slurm uses then), else the v2 root.
cgroup_writable() {
	local d=/sys/fs/cgroup
	[[ -d $d/freezer ]] && d=$d/freezer
	mkdir "$d/relish-probe-$$" 2>/dev/null || return 1
	rmdir "$d/relish-probe-$$" 2>/dev/null || true
}
if [[ -n ${SLURM_UP_CGROUP:-} ]]; then
	CGROUP=$SLURM_UP_CGROUP
elif cgroup_writable; then
	CGROUP=1
else
	CGROUP=0
fi
SLURMD_TIMEOUT=${SLURM_UP_SLURMD_TIMEOUT:-30}
P=${SLURM_UP_NODE_PREFIX:-n}
[[ $P =~ ^[a-z][a-z0-9]*$ ]] || die "SLURM_UP_NODE_PREFIX: expected lower-case letters and digits, got '$P'" 2
[[ -e $S/slurm.conf && -s $S/slurmctld.pid ]] && kill -0 "$(cat "$S/slurmctld.pid")" 2>/dev/null &&
	die "a Slurm already runs from $S (scripts/slurm-down.sh $S first)"
mkdir -p "$S/munge" "$S/ctld" "$S/spool" "$S/gpu" "$S/log"
chmod 755 "$S/munge"

# ---- munge: a key and a socket of our own ---------------------------------
if [[ ! -s $S/munge/munge.key ]]; then
	mungekey -c -f -k "$S/munge/munge.key" >/dev/null 2>&1 ||
		dd if=/dev/urandom of="$S/munge/munge.key" bs=1024 count=1 status=none
fi
chmod 600 "$S/munge/munge.key"
munged --force -S "$S/munge/munge.socket" --key-file="$S/munge/munge.key" \
	--pid-file="$S/munge/munged.pid" --log-file="$S/log/munged.log" \
	--seed-file="$S/munge/munge.seed" --num-threads=2 ||
	die "munged did not start (see $S/log/munged.log)" 3

# ---- free ports ----------------------------------------------------------
# A port nobody listens on now; a race with another instance shows as a
# daemon that cannot bind, and the bring-up is retried with new ports.
used_ports() { ss -Hltn 2>/dev/null | awk '{print $4}' | sed 's/.*://' | sort -u; }
pick_ports() {
	local n=$1 used p out=()
	used=$(used_ports)
	while ((${#out[@]} < n)); do
		p=$((20000 + RANDOM % 40000))
		grep -qx "$p" <<<"$used" && continue
		[[ " ${out[*]} " == *" $p "* ]] && continue
		out+=("$p")
	done
	echo "${out[@]}"
}

write_conf() {
	local ctld=$1
	shift
	local ports=("$@")
	# Job ids are part of cgroup paths (/sys/fs/cgroup/*/slurm*/job_N):
	# two instances must not start at the same one.
	local first=$((1000000 + (RANDOM * 32768 + RANDOM) % 50000000))
	local nodes="" i
	for ((i = 1; i <= NODES; i++)); do nodes+="${nodes:+,}$P$i"; done
	# Memory limits: the cgroup plugins (the kernel enforces --mem), or
	# the accounting sampler killing a job over its limit.
	local proctrack=proctrack/cgroup task=task/cgroup overmem=""
	if [[ $CGROUP != 1 ]]; then
		proctrack=proctrack/linuxproc
		task=task/none
		overmem=JobAcctGatherParams=OverMemoryKill
	fi
	cat >"$S/slurm.conf" <<EOF
# Written by scripts/slurm-up.sh for the private Slurm in $S.
ClusterName=$CLUSTER
SlurmctldHost=localhost
SlurmctldPort=$ctld
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$S/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$S/ctld
SlurmdSpoolDir=$S/spool/%n
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd-%n.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$S/plugstack.conf
ProctrackType=$proctrack
TaskPlugin=$task
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
$overmem
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu,shard
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$S/jobcomp.txt
ReturnToService=2
SlurmdParameters=config_overrides
FirstJobId=$first
MpiDefault=none
KillWait=5
MinJobAge=300
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=$SLURMD_TIMEOUT
EOF
	for ((i = 1; i <= NODES; i++)); do
		echo "NodeName=$P$i NodeHostname=localhost NodeAddr=127.0.0.1 Port=${ports[$((i - 1))]} CPUs=$CPUS RealMemory=$MEM Gres=gpu:$GPUS,shard:$SHARDS State=UNKNOWN" >>"$S/slurm.conf"
	done
	echo "PartitionName=main Nodes=$nodes Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO" >>"$S/slurm.conf"
	: >"$S/gres.conf"
	for ((i = 1; i <= NODES; i++)); do
		local g files=()
		for ((g = 0; g < GPUS; g++)); do
			ln -sf /dev/null "$S/gpu/$P$i-gpu$g"
			files+=("$S/gpu/$P$i-gpu$g")
		done
		for f in "${files[@]}"; do
			echo "NodeName=$P$i Name=gpu File=$f" >>"$S/gres.conf"
		done
		echo "NodeName=$P$i Name=shard Count=$SHARDS" >>"$S/gres.conf"
	done
	cat >"$S/cgroup.conf" <<EOF
CgroupPlugin=cgroup/v1
ConstrainCores=no
ConstrainRAMSpace=yes
ConstrainSwapSpace=yes
AllowedSwapSpace=0
ConstrainDevices=no
EOF
	: >"$S/plugstack.conf"
}

pid_alive() { [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# Wait until every node is idle: at most 15 s of wall time (sinfo itself
# can take seconds when the controller does not answer), and no longer
# than a second once a daemon has died.
wait_nodes() {
	local out end=$((SECONDS + 15)) f dead
	while ((SECONDS < end)); do
		out=$(SLURM_CONF="$S/slurm.conf" timeout 5 sinfo -h -N -o '%N %t' 2>/dev/null || true)
		if [[ -n $out ]] && ! grep -qv ' idle$' <<<"$out" &&
			(($(wc -l <<<"$out") == NODES)); then
			return 0
		fi
		dead=0
		for f in "$S/slurmctld.pid" "$S"/slurmd-*.pid; do
			[[ -s $f ]] && ! kill -0 "$(cat "$f")" 2>/dev/null && dead=1
		done
		((dead)) && ((SECONDS + 14 >= end)) && return 1
		sleep 0.1
	done
	return 1
}

# One cluster name for every attempt: slurmctld refuses a state folder
# that names another (even with -i), so a stale name is removed too.
CLUSTER=relish$(printf %04x $((RANDOM)))
rm -f "$S/ctld/clustername"
started=0
for attempt in 1 2 3; do
	read -r -a ports <<<"$(pick_ports $((NODES + 1)))"
	write_conf "${ports[@]}"
	export SLURM_CONF=$S/slurm.conf
	rm -f "$S/slurmctld.pid" "$S"/slurmd-*.pid
	# -i: ignore state left by an earlier instance in this folder.
	slurmctld -i -f "$SLURM_CONF" >>"$S/log/slurmctld.out" 2>&1 || true
	for ((i = 1; i <= NODES; i++)); do
		mkdir -p "$S/spool/$P$i"
		slurmd -N "$P$i" -f "$SLURM_CONF" >>"$S/log/slurmd-$P$i.out" 2>&1 || true
	done
	if wait_nodes; then
		started=1
		break
	fi
	# A port taken meanwhile, or a daemon that died: stop what runs, retry.
	for f in "$S"/slurmd-*.pid "$S/slurmctld.pid"; do
		pid_alive "$f" && kill "$(cat "$f")" 2>/dev/null || true
	done
	sleep 0.5
done
if ((!started)); then
	tail -n 5 "$S/log/slurmctld.log" "$S"/log/slurmd-*.log >&2 2>/dev/null || true
	die "the nodes did not come up (logs in $S/log)"
fi
echo "export SLURM_CONF=$S/slurm.conf"
