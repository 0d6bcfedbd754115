#!/usr/bin/env bash
# test_simulate_scale.sh - `relish simulate --scale` on the real binary: a
# trace N times larger (every experiment N times), over the trace's span or
# (--scale-span) N times it; the same seed gives the same report, the
# config says what was run; bad values exit 2 with one line on stderr and
# nothing on stdout.
set -u
: "${RELISH:?RELISH must name the relish binary}"
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# two experiments of three trials and one lone job: 7 jobs
cat >"$tmp/trace.csv" <<'T'
job_id,submit_time_s,duration_s,num_gpus,gpu_mem_mib,gpu_util_pct,experiment,model,batchsize
a1,0,600,1,3000,40,expA,resnet,32
a2,10,600,1,3000,40,expA,resnet,64
a3,20,900,1,5000,60,expA,resnet,128
b1,300,1200,1,2000,30,expB,bert,16
b2,310,1200,1,2000,30,expB,bert,16
b3,320,300,2,8000,90,expB,bert,32
c1,500,100,1,1000,20,lone,mlp,8
T
sim() { "$RELISH" simulate --trace "$tmp/trace.csv" --gpus 4 --gpu-memory 16384 --colocate none --json "$@"; }
field() { # FILE PYTHON-EXPRESSION-ON-d
	/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

sim >"$tmp/x1.json" || { echo "FAIL: x1 run"; fail=1; }
sim --scale 3 >"$tmp/x3.json" || { echo "FAIL: --scale 3 run"; fail=1; }
sim --scale 3 >"$tmp/x3b.json" || { echo "FAIL: --scale 3 rerun"; fail=1; }
sim --scale 3 --scale-seed 9 >"$tmp/x3s.json" || { echo "FAIL: --scale-seed run"; fail=1; }
sim --scale 3 --scale-span >"$tmp/x3l.json" || { echo "FAIL: --scale-span run"; fail=1; }

[ "$(field "$tmp/x1.json" 'd["config"]["jobs"], d["config"]["scale"], "scale_span" in d["config"]')" = "(7, 1, False)" ] ||
	{ echo "FAIL: x1 config: $(field "$tmp/x1.json" 'd["config"]')"; fail=1; }
[ "$(field "$tmp/x3.json" 'd["config"]["jobs"], d["config"]["scale"], d["config"]["scale_span"], d["config"]["scale_seed"]')" = "(21, 3, False, 1)" ] ||
	{ echo "FAIL: x3 config: $(field "$tmp/x3.json" 'd["config"]')"; fail=1; }
[ "$(field "$tmp/x3.json" 'sorted(d["policies"])')" = "['exclusive', 'gandiva', 'pack', 'relish', 'tiresias']" ] ||
	{ echo "FAIL: x3 policies"; fail=1; }
cmp -s "$tmp/x3.json" "$tmp/x3b.json" || { echo "FAIL: --scale 3 twice gave different reports"; fail=1; }
[ "$(field "$tmp/x3s.json" 'd["config"]["jobs"], d["config"]["scale_seed"]')" = "(21, 9)" ] ||
	{ echo "FAIL: --scale-seed config"; fail=1; }
cmp -s "$tmp/x3.json" "$tmp/x3s.json" && { echo "FAIL: another seed gave the same report"; fail=1; }
[ "$(field "$tmp/x3l.json" 'd["config"]["jobs"], d["config"]["scale_span"]')" = "(21, True)" ] ||
	{ echo "FAIL: --scale-span config"; fail=1; }
# 21 jobs on 4 GPUs queue; spread over three times the span they queue less
[ "$(field "$tmp/x3l.json" 'd["policies"]["exclusive"]["mean_queue_s"] < '"$(field "$tmp/x3.json" 'd["policies"]["exclusive"]["mean_queue_s"]')")" = "True" ] ||
	{ echo "FAIL: --scale-span did not lower exclusive's queueing"; fail=1; }
"$RELISH" simulate --trace "$tmp/trace.csv" --gpus 4 --gpu-memory 16384 --colocate none --scale 2 >"$tmp/table" ||
	{ echo "FAIL: table run"; fail=1; }
grep -q "trace.csv x 2 (over its span, seed 1): 14 jobs, 6 experiments" "$tmp/table" ||
	{ echo "FAIL: table header: $(head -1 "$tmp/table")"; fail=1; }

bad() { # EXPECTED-STDERR ARGS...
	local want=$1
	shift
	"$RELISH" simulate --trace "$tmp/trace.csv" --gpus 4 --gpu-memory 16384 "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	[ "$rc" -eq 2 ] || { echo "FAIL: $*: exit $rc, expected 2"; fail=1; }
	[ -s "$tmp/out" ] && { echo "FAIL: $*: printed on stdout"; fail=1; }
	[ "$(cat "$tmp/err")" = "relish simulate: $want" ] || { echo "FAIL: $*: stderr: $(cat "$tmp/err")"; fail=1; }
}
bad '--scale: expected a number >= 1, got "0"' --scale 0
bad '--scale: expected a whole number from 1 to 1000, got "1001"' --scale 1001
bad '--scale: expected a whole number from 1 to 1000, got "2.5"' --scale 2.5
bad '--scale: expected a number >= 1, got "two"' --scale two
bad '--scale-span needs --scale N with N >= 2 (see relish simulate --help)' --scale-span
bad '--scale-seed needs --scale N with N >= 2 (see relish simulate --help)' --scale-seed 3
bad '--scale-seed: expected a whole number, got "1.5"' --scale 2 --scale-seed 1.5

[ "$fail" -eq 0 ] && echo "test_simulate_scale: ok"
exit "$fail"
