#!/usr/bin/python3
"""Markdown tables of docs/evaluation.md (issue 20's evaluation) from the
JSON files that scripts/eval-policy.sh writes.

usage: policy-tables.py OUT_DIR SIZES ABLATION_SIZES
A missing file is an error: no table silently drops a row.
"""
import json
import sys

PEERS = ("tiresias", "gandiva", "pack", "exclusive")
ORDERS = ("fifo", "las", "tiresias")


def load(path, key="policies"):
    try:
        with open(path) as f:
            d = json.load(f)
        return d[key] if key else d
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"policy-tables: {path}: {e}")


def h(r, k):
    return r[k] / 3600


def header(*cols):
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))


def best(d, key):
    """The peer with the least value of key, and its value."""
    p = min(PEERS, key=lambda q: d[q][key])
    return p, d[p][key]


def best_pair(f, key):
    """The (peer, order) pair with the least value of key in an --order all
    run's pairs, and its value."""
    pairs = load(f, "pairs")
    name = min((k for k, r in pairs.items() if r["policy"] != "relish"),
               key=lambda k: pairs[k][key])
    return name, pairs[name][key]


def headline(out, sizes):
    print("**relish against the best (peer, order) pair** (each figure against the best "
          "of tiresias, gandiva, pack and exclusive, each in fifo, las and tiresias order, "
          "for that figure; ratio: the pair's time over relish's):\n")
    header("GPUs", "relish mean JCT h", "best pair", "ratio", "relish HPO exp. h",
           "best pair", "ratio", "relish makespan h", "best pair", "relish / best",
           "relish OOMs")
    for n in sizes:
        f = f"{out}/all_{n}.json"
        r = load(f)["relish"]
        cells = []
        for key in ("mean_jct_s", "mean_burst_jct_s"):
            p, v = best_pair(f, key)
            cells += [f"{h(r, key):.1f}", f"{p} {v / 3600:.1f}", f"**{v / r[key]:.2f}x**"]
        p, v = best_pair(f, "makespan_s")
        cells += [f"{h(r, 'makespan_s'):.0f}", f"{p} {v / 3600:.0f}",
                  f"{r['makespan_s'] / v:.3f}"]
        print(f"| {n} | " + " | ".join(cells) + f" | {r['oom_count']} |")


def pairs_table(out, sizes):
    print("\nEvery peer in every order (mean JCT h / HPO experiment h / makespan h / OOMs):\n")
    header("peer, order", *[f"{n} GPUs" for n in sizes])
    for p in ("relish",) + PEERS:
        for o in (("las",) if p == "relish" else ORDERS):
            cells = [cell(load(f"{out}/all_{n}.json", "pairs")[f"{p}-{o}"]) for n in sizes]
            print(f"| {p}, {o} | " + " | ".join(cells) + " |")


def sweep(out, sizes):
    print("\nEvery policy (mean JCT h / HPO experiment h / makespan h / OOMs):\n")
    header("GPUs", "relish", "tiresias", "gandiva", "pack", "exclusive", "exclusive, las")
    for n in sizes:
        d = load(f"{out}/all_{n}.json")
        def c(r):
            return (f"{h(r, 'mean_jct_s'):.1f} / {h(r, 'mean_burst_jct_s'):.1f} / "
                    f"{h(r, 'makespan_s'):.0f} / {r['oom_count']}")
        try:
            el = c(load(f"{out}/exlas_{n}.json")["exclusive"])
        except SystemExit:
            el = ""
        print(f"| {n} | " + " | ".join(c(d[p]) for p in ("relish",) + PEERS) + f" | {el} |")


def cell(r):
    return (f"{h(r, 'mean_jct_s'):.1f} / {h(r, 'mean_burst_jct_s'):.1f} / "
            f"{h(r, 'makespan_s'):.0f} / {r['oom_count']}")


def ablation(out, sizes):
    print("\nAblation of relish (mean JCT h / HPO experiment h / makespan h / OOMs):\n")
    rows = [
        ("a0", "the rules before issue 20: gangs whole, jobs past a GPU-day alone, admit at +5 % "
               "throughput, every unmeasured shape on its family estimate"),
        ("a1", "+ one segment at a time on a family estimate"),
        ("a2", "+ gangs share devices"),
        ("a3", "+ long-served jobs share (no solo_after_s)"),
        ("b0", "+ admission by the model's measured margin (0.044 per predicted speed, any gain), "
               "exploration, single segments time-slice: relish before issue 26's last round"),
        ("b1", "+ gangs bet on the hint's probe (gang_probe)"),
        ("b2", "+ gangs time-slice (timeslice_gangs)"),
        ("b3", "+ the tail of LAS (las_tail 0.99)"),
        ("b5", "+ a hint's headroom measured (hint_quantile 0.999)"),
        ("all", "+ a family estimate's headroom measured (family_quantile 0.999): relish now"),
        ("b4", "relish, but a gang never measured runs whole (no gang_probe)"),
        ("m0", "relish, no margin (any modelled gain)"),
        ("m18", "relish, the margin measured on Gavel's V100 pairs (0.18)"),
    ]
    header("rule", *[f"{n} GPUs" for n in sizes])
    for key, what in rows:
        cells = []
        for n in sizes:
            f = f"{out}/all_{n}.json" if key == "all" else f"{out}/{key}_{n}.json"
            cells.append(cell(load(f)["relish"]))
        print(f"| {what} | " + " | ".join(cells) + " |")


def segments(out, sizes):
    print("\nSegment length, every policy at that length (relish mean JCT h, "
          "relish / best peer for mean JCT, HPO experiment, makespan):\n")
    header("segment", *[f"{n} GPUs" for n in sizes])
    for seg, f in (("1800 s", "seg1800"), ("3600 s (default)", "all"), ("7200 s", "seg7200")):
        cells = []
        for n in sizes:
            d = load(f"{out}/{f}_{n}.json")
            r = d["relish"]
            rj = best(d, "mean_jct_s")[1] / r["mean_jct_s"]
            rb = best(d, "mean_burst_jct_s")[1] / r["mean_burst_jct_s"]
            rm = r["makespan_s"] / best(d, "makespan_s")[1]
            cells.append(f"{h(r, 'mean_jct_s'):.1f}: {rj:.2f}x, {rb:.2f}x, {rm:.3f}")
        print(f"| {seg} | " + " | ".join(cells) + " |")


def peers(out, sizes):
    print("\nThe peers' own settings (mean JCT h / HPO experiment h / makespan h / OOMs):\n")
    header("peer", *[f"{n} GPUs" for n in sizes])
    rows = [
        ("tiresias, 2 queues (threshold 3600 GPU-s), as before issue 26: 1-hour segments, "
         "a queue FIFO by arrival at every boundary", "t2q_q0", "tiresias"),
        ("tiresias, 2 queues, running jobs first in a queue, 3600 s quantum", "t2q_q3600",
         "tiresias"),
        ("tiresias, 2 queues, running jobs first, 1800 s quantum", "t2q", "tiresias"),
        ("tiresias, 4 queues (x10 from 3600 GPU-s), running jobs first, 1800 s quantum",
         "t10", "tiresias"),
        ("tiresias, 9 queues (x2 from 1800 GPU-s), as before issue 26", "t9_q0", "tiresias"),
        ("tiresias, 9 queues, running jobs first, 3600 s quantum", "t9_q3600", "tiresias"),
        ("tiresias, 9 queues, running jobs first, 900 s quantum", "t9_q900", "tiresias"),
        ("tiresias, 9 queues, running jobs first, 1800 s quantum (the default)", "all",
         "tiresias"),
        ("gandiva, time-slicing as deep as memory allows", "gts0", "gandiva"),
        ("gandiva, two segments time-sliced at most (the default)", "all", "gandiva"),
        ("gandiva in LAS order with relish's tail of LAS (--las-tail 0.99)", "glt", "gandiva"),
    ]
    for what, f, p in rows:
        print(f"| {what} | " + " | ".join(cell(load(f"{out}/{f}_{n}.json")[p]) for n in sizes) + " |")


def fairness(out, sizes):
    print("\nFinish-time fairness (rho: median / p95 over experiments; worst user's mean):\n")
    header("GPUs", *("relish", "relish, fair order", "fair, never forgets") + PEERS)
    for n in sizes:
        d = load(f"{out}/all_{n}.json")
        fa = load(f"{out}/fair_{n}.json")["relish"]
        f0 = load(f"{out}/fair0_{n}.json")["relish"]
        def c(r):
            f = r["fairness"]
            return f"{f['rho_median']:.2f} / {f['rho_p95']:.0f}; {f['rho_user_max']:.0f}"
        print(f"| {n} | " + " | ".join([c(d["relish"]), c(fa), c(f0)] + [c(d[p]) for p in PEERS]) + " |")
    print("\nrelish with the fair order (mean JCT h / HPO experiment h / makespan h / OOMs):\n")
    header("GPUs", "relish, las", "relish, fair", "fair, never forgets")
    for n in sizes:
        print(f"| {n} | {cell(load(f'{out}/all_{n}.json')['relish'])} "
              f"| {cell(load(f'{out}/fair_{n}.json')['relish'])} "
              f"| {cell(load(f'{out}/fair0_{n}.json')['relish'])} |")


def check(out):
    c = load(f"{out}/check.json", None)
    print(f"\nThe co-location model against measurements ({c['lucid_pairs']} Lucid pairs; "
          f"Gavel V100: {c['gavel_types']} job types matched, {c['gavel_pairs']} pairs that ran "
          f"together, {c['gavel_did_not_fit']} that did not fit):\n")
    header("predictor", "measured by", "pairs", "median abs error", "p90 abs error", "bias")
    def row(what, by, e):
        print(f"| {what} | {by} | {e['n']} | {e['median_abs_error']:.3f} "
              f"| {e['p90_abs_error']:.3f} | {e['bias']:+.3f} |")
    row("the core's prior, min(1, 100 / (u_a + u_b))", "Lucid", c["prior"]["lucid"])
    row("the core's prior", "Gavel V100", c["prior"]["gavel"])
    row("the simulator's model (Lucid's pairs, else the prior)", "Gavel V100", c["model"]["gavel"])
    row("Lucid's own measurement of the pair", "Gavel V100", c["lucid_measurement"]["gavel"])
    fit = c["fit"]
    what = f"fitted on Lucid: 1 / (1 + {fit['alpha']:.2f} max(0, (U - {fit['beta']:.0f}) / 100))"
    row(what, "Lucid", fit["lucid"])
    row(what, "Gavel V100", fit["gavel"])


def speed(out):
    for what, f in (("the five policies in their own orders", "time"),
                    ("every peer in every order (--order all, 13 runs)", "time_all")):
        runs = []
        for i in (1, 2, 3):
            with open(f"{out}/{f}_{i}.txt") as fh:
                wall, rss = fh.read().split()[-2:]
            runs.append((float(wall), int(rss)))
        print(f"\nThe whole trace at 64 GPUs, {what}, side by side: wall "
              + ", ".join(f"{w:.2f} s" for w, _ in runs)
              + f" (median {sorted(w for w, _ in runs)[1]:.2f} s); "
              f"peak RSS {max(r for _, r in runs) / 1024:.0f} MB")


def main():
    out, sizes, abl = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
    headline(out, sizes)
    pairs_table(out, abl)
    sweep(out, sizes)
    ablation(out, abl)
    segments(out, abl)
    peers(out, abl)
    fairness(out, abl)
    check(out)
    speed(out)


if __name__ == "__main__":
    main()
