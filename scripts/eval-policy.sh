#!/usr/bin/env bash
# The policy evaluation of docs/evaluation.md: relish against the best
# (peer, order) pair (tiresias, gandiva, pack, exclusive, each in fifo, las
# and tiresias order: --order all) at each size, every pair, the ablation
# of relish's rules, the peers' own settings, fairness between users, the
# co-location model against Gavel's measurements, and the simulator's speed.
#   scripts/eval-policy.sh BUILD_DIR [TRACE] [OUT_DIR]
# Every table is printed from the JSON files written to OUT_DIR
# (scripts/policy-tables.py); the trace is read where it lies (its
# Lucid-derived columns are for evaluation only).
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [TRACE] [OUT_DIR]}
trace=${2:-$(dirname "$0")/../../shared/traces/philly_hpo_trace.csv}
out=${3:-build/policy-eval}
gavel=${GAVEL:-$(dirname "$trace")/raw/gavel_simulation_throughputs.json}
sizes=${SIZES:-"64 128 256 512 1024 2048"}
abl=${ABLATION:-"64 128 256"}
mkdir -p "$out"
sim() { "$build/relish" simulate --trace "$trace" --gpu-memory 32768 --json "$@"; }
for n in $sizes; do
	sim --gpus "$n" --policy all --order all >"$out/all_$n.json"
done
for n in $abl; do
	# LAS without sharing: the limit of Tiresias with ever finer queues
	sim --gpus "$n" --policy exclusive --order las >"$out/exlas_$n.json"
	# relish's rules one at a time, from those it had before issue 20
	# (without the gang and order rules of issue 26's last round: new)
	new="--relish-gang-probe off --relish-timeslice-gangs off --las-tail 0 --relish-hint-quantile 0"
	new="$new --relish-family-quantile 0"
	old="--relish-min-speedup 1.05 --relish-margin 0 $new"
	sim --gpus "$n" --policy relish $old --relish-gangs off --relish-solo-after-s 86400 \
		--relish-family-probe off >"$out/a0_$n.json"
	sim --gpus "$n" --policy relish $old --relish-gangs off --relish-solo-after-s 86400 >"$out/a1_$n.json"
	sim --gpus "$n" --policy relish $old --relish-solo-after-s 86400 >"$out/a2_$n.json"
	sim --gpus "$n" --policy relish $old >"$out/a3_$n.json"
	# issue 26's last rounds: gangs bet on the hint's probe, gangs
	# time-slice, the tail of LAS, the hint's and the family estimate's
	# measured headroom; and the tail for Gandiva in LAS order
	sim --gpus "$n" --policy relish $new >"$out/b0_$n.json"
	fq="--relish-family-quantile 0"
	sim --gpus "$n" --policy relish --relish-timeslice-gangs off --las-tail 0 \
		--relish-hint-quantile 0 $fq >"$out/b1_$n.json"
	sim --gpus "$n" --policy relish --las-tail 0 --relish-hint-quantile 0 $fq >"$out/b2_$n.json"
	sim --gpus "$n" --policy relish --relish-hint-quantile 0 $fq >"$out/b3_$n.json"
	sim --gpus "$n" --policy relish $fq >"$out/b5_$n.json"
	sim --gpus "$n" --policy relish --relish-gang-probe off >"$out/b4_$n.json"
	sim --gpus "$n" --policy gandiva --order las --las-tail 0.99 >"$out/glt_$n.json"
	sim --gpus "$n" --policy relish --relish-margin 0 >"$out/m0_$n.json"
	sim --gpus "$n" --policy relish --relish-margin 0.18 >"$out/m18_$n.json"
	# segment length: every policy at once (peers segment too)
	sim --gpus "$n" --policy all --segment-s 1800 >"$out/seg1800_$n.json"
	sim --gpus "$n" --policy all --segment-s 7200 >"$out/seg7200_$n.json"
	# the peers' own settings
	sim --gpus "$n" --policy tiresias --tiresias-limits 3600 >"$out/t2q_$n.json"
	sim --gpus "$n" --policy tiresias --tiresias-limits 3600 --tiresias-quantum-s 0 >"$out/t2q_q0_$n.json"
	sim --gpus "$n" --policy tiresias --tiresias-limits 3600,36000,360000 >"$out/t10_$n.json"
	sim --gpus "$n" --policy tiresias --tiresias-limits 3600 --tiresias-quantum-s 3600 >"$out/t2q_q3600_$n.json"
	sim --gpus "$n" --policy tiresias --tiresias-quantum-s 0 >"$out/t9_q0_$n.json"
	sim --gpus "$n" --policy tiresias --tiresias-quantum-s 3600 >"$out/t9_q3600_$n.json"
	sim --gpus "$n" --policy tiresias --tiresias-quantum-s 900 >"$out/t9_q900_$n.json"
	sim --gpus "$n" --policy gandiva --gandiva-timeslice 0 >"$out/gts0_$n.json"
	# fair share between the trace's users
	sim --gpus "$n" --policy relish --order fair >"$out/fair_$n.json"
	sim --gpus "$n" --policy relish --order fair --half-life-s 0 >"$out/fair0_$n.json"
done
"$build/relish" simulate --trace "$trace" --check-colocate "$gavel" --json >"$out/check.json"
# speed and memory: the whole trace, every policy side by side, then every
# peer in every order, three runs each, alternating
for i in 1 2 3; do
	/usr/bin/time -f "%e %M" -o "$out/time_$i.txt" "$build/relish" simulate --trace "$trace" \
		--gpus 64 --gpu-memory 32768 --policy all --json >/dev/null
	/usr/bin/time -f "%e %M" -o "$out/time_all_$i.txt" "$build/relish" simulate --trace "$trace" \
		--gpus 64 --gpu-memory 32768 --policy all --order all --json >/dev/null
done
/usr/bin/python3 "$(dirname "$0")/policy-tables.py" "$out" "$sizes" "$abl"
