#!/usr/bin/env bash
# slurm_standin.sh - stand-ins for sbatch, squeue and scancel, for the slurm
# executor's unit tests (tests/test_slurm_exec.c) on machines without Slurm.
# Never shipped.  Called through symlinks named sbatch, squeue, scancel,
# sacct; the
# role is the name it was called by.  State lives in $STANDIN_SLURM_DIR, else
# in the folder of the link it was called by (a user's scancel gets only
# PATH and SLURM_CONF of relish's environment):
#   sbatch.N.args   every argument of the N-th sbatch call, one a line
#   id.N            made by the N-th call (how calls at once get their N)
#   calls.squeue    one line per squeue call (the test counts them)
#   calls.scancel   the arguments of each scancel call
#   sbatch.N.uid    the uid the N-th sbatch ran as
#   scancel.uids    the uid of each scancel call, one a line
#   job.ID          "STATE|REASON|EXIT_RAW|NODE|NAME|COMMENT" of job ID
#   job.ID.forgotten  squeue no longer lists it (sacct still does)
#   refuse          if present, sbatch fails with its text on stderr
#   pend_ms         if present, jobs stay PENDING this long
# A job runs the script sbatch was given, with its arguments and the
# environment sbatch had, output appended to --output, in a session of its
# own; it ends COMPLETED, FAILED (exit status << 8 as EXIT_RAW) or, through
# scancel, CANCELLED.  squeue prints SLURM_SQUEUE_FORMAT's columns.
set -uo pipefail
D=${STANDIN_SLURM_DIR:-$(dirname "$0")}
role=$(basename "$0")

job_write() { # ID STATE REASON RAW NODE NAME COMMENT
	local f="$D/job.$1"
	printf '%s|%s|%s|%s|%s|%s\n' "$2" "$3" "$4" "$5" "$6" "$7" >"$f.tmp" && mv -f "$f.tmp" "$f"
}

case "$role" in
sbatch)
	# a number of its own, also when several sbatch run at once (mkdir is
	# atomic: the first to make id.N has N)
	n=0
	until mkdir "$D/id.$n" 2>/dev/null; do n=$((n + 1)); done
	printf '%s\n' "$@" >"$D/sbatch.$n.args"
	id -u >"$D/sbatch.$n.uid"
	if [[ -e $D/refuse ]]; then
		cat "$D/refuse" >&2
		exit 1
	fi
	out="" name="" comment="" node="n1" script=""
	while (($#)); do
		case "$1" in
		--output=*) out=${1#--output=} ;;
		--job-name=*) name=${1#--job-name=} ;;
		--comment=*) comment=${1#--comment=} ;;
		--nodelist=*) node=${1#--nodelist=} ;;
		--*) ;;
		*) script=$1; shift; break ;;
		esac
		shift
	done
	id=$((1000 + n))
	job_write "$id" PENDING Resources 0 "" "$name" "$comment"
	pend=0
	[[ -e $D/pend_ms ]] && pend=$(cat "$D/pend_ms")
	(
		exec </dev/null >/dev/null 2>&1
		setsid bash -c '
			D=$1 id=$2 node=$3 name=$4 comment=$5 out=$6 pend=$7; shift 7
			trap "true" TERM # the job shell outlives scancel to record it
			sleep "$(awk -v m="$pend" "BEGIN{print m/1000}")"
			[ -e "$D/job.$id.cancel" ] && exit 0
			printf "RUNNING|None|0|%s|%s|%s\n" "$node" "$name" "$comment" >"$D/job.$id.tmp"
			mv -f "$D/job.$id.tmp" "$D/job.$id"
			echo $$ >"$D/job.$id.pid"
			SLURMD_NODENAME=$node SLURM_JOB_ID=$id "$@" >>"$out" 2>&1
			rc=$?
			if [ -e "$D/job.$id.cancel" ]; then st=CANCELLED; raw=0
			elif [ $rc -eq 0 ]; then st=COMPLETED; raw=0
			else st=FAILED; raw=$((rc << 8)); fi
			printf "%s|None|%s|%s|%s|%s\n" "$st" "$raw" "$node" "$name" "$comment" >"$D/job.$id.tmp"
			mv -f "$D/job.$id.tmp" "$D/job.$id"
		' standin "$D" "$id" "$node" "$name" "$comment" "$out" "$pend" "$script" "$@" &
	)
	echo "$id"
	;;
squeue)
	echo "$*" >>"$D/calls.squeue"
	for f in "$D"/job.*; do
		[[ $f =~ /job\.([0-9]+)$ ]] || continue
		[[ -e $f.forgotten ]] && continue # aged out of slurmctld's memory
		IFS='|' read -r st reason raw node name comment <"$f" || continue
		printf '%s|%s|%s|%s|%s|%s|%s|\n' "${BASH_REMATCH[1]}" "$st" "$reason" "$raw" "$node" "$name" "$comment"
	done
	;;
sacct)
	# sacct -n -P -X -j ID,ID,... -o JobID,State,ExitCode,NodeList
	echo "$*" >>"$D/calls.sacct"
	ids=""
	while (($#)); do [[ $1 == -j ]] && ids=$2; shift; done
	for id in ${ids//,/ }; do
		f="$D/job.$id"
		[[ -e $f ]] || continue
		IFS='|' read -r st reason raw node name comment <"$f"
		printf '%s|%s|%d:%d|%s\n' "$id" "$st" $((raw >> 8)) $((raw & 127)) "$node"
		printf '%s.batch|%s|0:0|%s\n' "$id" "$st" "$node"
	done
	;;
scancel)
	echo "$*" >>"$D/calls.scancel"
	id -u >>"$D/scancel.uids"
	for a in "$@"; do
		[[ $a =~ ^[0-9]+$ ]] || continue
		f="$D/job.$a"
		[[ -e $f ]] || continue
		IFS='|' read -r st reason raw node name comment <"$f"
		case $st in
		PENDING) : >"$f.cancel"; job_write "$a" CANCELLED None 0 "" "$name" "$comment" ;;
		RUNNING)
			: >"$f.cancel"
			pid=$(cat "$f.pid" 2>/dev/null) && kill -TERM -- "-$pid" 2>/dev/null
			;;
		esac
	done
	;;
*)
	echo "slurm_standin.sh: called as $role" >&2
	exit 2
	;;
esac
