#!/usr/bin/env bash
# Simulator evaluation: the sweep of docs/evaluation.md and the benchmark.
#   scripts/bench-sim.sh BUILD_DIR [TRACE] [OUT_DIR]
# Runs relish simulate on the Philly evaluation trace (read where it lies,
# never copied: its Lucid-derived columns are for evaluation only) for a
# sweep of cluster sizes at 32 GiB and 80 GiB per GPU, writes one JSON per
# run to OUT_DIR, prints a Markdown table, draws the plots of one size, and
# runs bench/bench_sim for speed and memory.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [TRACE] [OUT_DIR]}
trace=${2:-$(dirname "$0")/../../shared/traces/philly_hpo_trace.csv}
out=${3:-build/sim-eval}
sizes=${SIZES:-"64 256 512 768 1024 1536 2048"}
mems=${MEMS:-"32768 81920"}
mkdir -p "$out"
echo "| GPUs | GiB | policy | makespan h | bound h | mean JCT h | median JCT h | p95 JCT h | HPO exp. h | queue h | mem % | comp % | busy % | OOMs |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for mem in $mems; do
  for n in $sizes; do
    f="$out/sim_${n}_${mem}.json"
    "$build/relish" simulate --trace "$trace" --gpus "$n" --gpu-memory "$mem" --policy all --json > "$f"
    /usr/bin/python3 - "$f" "$n" "$mem" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); n, mem = sys.argv[2], int(sys.argv[3]) // 1024
for p in ("exclusive", "pack", "relish"):
    r = d["policies"][p]; h = lambda k: r[k] / 3600
    print(f"| {n} | {mem} | {p} | {h('makespan_s'):.0f} | {h('lower_bound_makespan_s'):.0f} | {h('mean_jct_s'):.1f} | "
          f"{h('median_jct_s'):.2f} | {h('p95_jct_s'):.0f} | {h('mean_burst_jct_s'):.1f} | {h('mean_queue_s'):.1f} | "
          f"{100*r['gpu_mem_util']:.1f} | {100*r['gpu_compute_util']:.1f} | {100*r['gpu_busy']:.1f} | {r['oom_count']} |")
PY
  done
done
plot_n=${PLOT_GPUS:-64}
"$build/relish" simulate --trace "$trace" --gpus "$plot_n" --gpu-memory 32768 --out "$out/plots" --series-step-s 21600 >/dev/null
echo "plots: $out/plots/utilisation.png $out/plots/jct_cdf.png"
if [ -x "$build/bench_sim" ]; then "$build/bench_sim" "$trace" 64 32768; fi
