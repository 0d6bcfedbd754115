#!/usr/bin/env bash
# Simulator evaluation: the sweep of docs/evaluation.md and the benchmark.
#   scripts/bench-sim.sh BUILD_DIR [TRACE] [OUT_DIR]
# Runs relish simulate on the Philly evaluation trace (read where it lies,
# never copied: its Lucid-derived columns are for evaluation only) for a
# sweep of cluster sizes at 32 GiB and 80 GiB per GPU and the ablation,
# writes one JSON per run to OUT_DIR, prints the Markdown tables of
# docs/evaluation.md (scripts/eval-tables.py), draws the plots of one size
# (PLOT_GPUS), and runs bench/bench_sim for speed and memory.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [TRACE] [OUT_DIR]}
trace=${2:-$(dirname "$0")/../../shared/traces/philly_hpo_trace.csv}
out=${3:-build/sim-eval}
sizes=${SIZES:-"64 256 512 768 1024 1536 2048"}
mems=${MEMS:-"32768 81920"}
abl=${ABLATION:-"512 768 1024"}
mkdir -p "$out"
sim() { "$build/relish" simulate --trace "$trace" --json "$@"; }
for mem in $mems; do
  for n in $sizes; do
    sim --gpus "$n" --gpu-memory "$mem" --policy all > "$out/sim_${n}_${mem}.json"
  done
done
# The ablation (32 GiB): one part of relish at a time.
for n in $abl; do
  sim --gpus "$n" --gpu-memory 32768 --policy exclusive --order las > "$out/abl_exclas_$n.json"
  sim --gpus "$n" --gpu-memory 32768 --policy relish --order fifo > "$out/abl_relishfifo_$n.json"
  sim --gpus "$n" --gpu-memory 32768 --policy relish --hints exact > "$out/abl_relishexact_$n.json"
done
/usr/bin/python3 "$(dirname "$0")/eval-tables.py" "$out" "$sizes" "$mems" "$abl"
plot_n=${PLOT_GPUS:-64}
"$build/relish" simulate --trace "$trace" --gpus "$plot_n" --gpu-memory 32768 --out "$out/plots" --series-step-s 21600 >/dev/null
echo "plots: $out/plots/utilisation.png $out/plots/jct_cdf.png"
if [ -x "$build/bench_sim" ] && [ "${BENCH:-1}" = 1 ]; then "$build/bench_sim" "$trace" 64 32768; fi
