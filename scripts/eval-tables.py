#!/usr/bin/python3
"""Markdown tables of docs/evaluation.md from the JSON files that
scripts/bench-sim.sh writes (relish simulate --json, one file per run).

usage: eval-tables.py OUT_DIR SIZES MEMS ABLATION_SIZES
  SIZES, MEMS and ABLATION_SIZES are space-separated lists, as in
  bench-sim.sh.  Prints three tables: the sweep, the ratios against
  exclusive, and the ablation (32 GiB).  A missing file is an error: the
  tables must not silently drop rows.
"""
import json
import sys

POLICIES = ("exclusive", "pack", "relish", "tiresias", "gandiva")


def load(path):
    try:
        with open(path) as f:
            return json.load(f)["policies"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"eval-tables: {path}: {e}")


def hours(r, k):
    return r[k] / 3600


def header(*cols):
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))


def sweep_runs(out, sizes, mems):
    """(GPUs, GiB, policies) of each sweep run, memory-major as in the doc."""
    for mem in mems:
        for n in sizes:
            yield n, int(mem) // 1024, load(f"{out}/sim_{n}_{mem}.json")


def sweep(out, sizes, mems):
    header("GPUs", "GiB", "policy", "order", "makespan h", "bound h", "mean JCT h",
           "median JCT h", "p95 JCT h", "HPO exp. h", "queue h", "mem %", "comp %",
           "busy %", "OOMs")
    for n, gib, d in sweep_runs(out, sizes, mems):
        for p in POLICIES:
            r = d[p]
            print(f"| {n} | {gib} | {p} | {r['order']} "
                  f"| {hours(r, 'makespan_s'):.0f} | {hours(r, 'lower_bound_makespan_s'):.0f} "
                  f"| {hours(r, 'mean_jct_s'):.1f} | {hours(r, 'median_jct_s'):.2f} "
                  f"| {hours(r, 'p95_jct_s'):.0f} | {hours(r, 'mean_burst_jct_s'):.1f} "
                  f"| {hours(r, 'mean_queue_s'):.1f} | {100 * r['gpu_mem_util']:.1f} "
                  f"| {100 * r['gpu_compute_util']:.1f} | {100 * r['gpu_busy']:.1f} "
                  f"| {r['oom_count']} |")


def ratios(out, sizes, mems):
    header("GPUs", "GiB", "relish/exclusive mean JCT", "relish/exclusive makespan",
           "pack/exclusive mean JCT", "relish makespan / bound")
    for n, gib, d in sweep_runs(out, sizes, mems):
        e, p, r = d["exclusive"], d["pack"], d["relish"]
        print(f"| {n} | {gib} "
              f"| {e['mean_jct_s'] / r['mean_jct_s']:.2f}x "
              f"| {e['makespan_s'] / r['makespan_s']:.2f}x "
              f"| {e['mean_jct_s'] / p['mean_jct_s']:.2f}x "
              f"| {r['makespan_s'] / r['lower_bound_makespan_s']:.2f} |")


def ablation(out, sizes):
    def cell(r):
        return f"{hours(r, 'mean_jct_s'):.1f} / {hours(r, 'makespan_s'):.0f} / {r['oom_count']}"

    header("GPUs", "exclusive fifo", "exclusive las", "pack fifo", "relish fifo", "relish las",
           "relish las, exact hints")
    for n in sizes:
        d = load(f"{out}/sim_{n}_32768.json")
        ex = load(f"{out}/abl_exclas_{n}.json")["exclusive"]
        rf = load(f"{out}/abl_relishfifo_{n}.json")["relish"]
        rx = load(f"{out}/abl_relishexact_{n}.json")["relish"]
        print(f"| {n} | {cell(d['exclusive'])} | {cell(ex)} | {cell(d['pack'])} "
              f"| {cell(rf)} | {cell(d['relish'])} | {cell(rx)} |")


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.strip().splitlines()[2])
    out, sizes, mems, abl = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4].split()
    sweep(out, sizes, mems)
    print()
    ratios(out, sizes, mems)
    if abl:
        print()
        ablation(out, abl)


if __name__ == "__main__":
    main()
