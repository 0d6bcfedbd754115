#!/usr/bin/python3
"""optuna_regret.py - Optuna 5's samplers on the regret benchmark of
bench/bench_regret.c, run the same way, so scripts/bench-regret.sh can print
both tools in one table.  Optuna 5 is not in Debian: it runs from its source
with Debian's libraries (docs/benchmarks.md, "Optuna 5 from its source";
PYTHONPATH names the source folder).

Functions: Branin (x0 in [-5, 10], x1 in [0, 15]) and Hartmann6 ([0, 1]^6),
minimised.  Variants: "tpe", TPESampler with its defaults (in Optuna 5:
multivariate, constant liar); "gp", GPSampler with its defaults (running
trials through its batch log EI); sampler seed = run seed.  A run asks for
`trials` trials with at most `concurrent` running: a new trial is asked for
as soon as a slot is free (the others still RUNNING in the study), trial k
of seed s takes duration(s, k), the same hash bench_regret.c uses, and
results are told in completion order (ties by trial number).
concurrent = 1 is the sequential run.

Prints one line per run: "optuna FUNCTION VARIANT CONCURRENT SEED REGRET".

Usage: optuna_regret.py [--seeds N] [--first-seed S] [--trials N] [--jobs N]
                        [--functions branin,hartmann6] [--variants default,...]
                        [--concurrency 1,4]
"""
import argparse
import heapq
import math
import multiprocessing
import sys

import warnings

import optuna

if not optuna.__version__.startswith("5."):
    sys.exit("optuna_regret.py: needs Optuna 5 (found %s); docs/benchmarks.md says how "
             "to run it from its source" % optuna.__version__)

M64 = (1 << 64) - 1


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def duration(s, k):
    """Duration of trial k of seed s: bench_regret.c's duration()."""
    h = mix64((mix64((s + 0x9E3779B97F4A7C15) & M64) + (k + 1) * 0xD1B54A32D192ED03) & M64)
    return 0.5 + (h >> 11) * 2.0 ** -53


def branin(x):
    b, c, t = 5.1 / (4 * math.pi ** 2), 5 / math.pi, 1 / (8 * math.pi)
    q = x[1] - b * x[0] ** 2 + c * x[0] - 6
    return q * q + 10 * (1 - t) * math.cos(x[0]) + 10


ALPHA = [1.0, 1.2, 3.0, 3.2]
A = [[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
     [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]]
P = [[0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886],
     [0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991],
     [0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650],
     [0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381]]


def hartmann6(x):
    return -sum(ALPHA[i] * math.exp(-sum(A[i][j] * (x[j] - P[i][j]) ** 2 for j in range(6)))
                for i in range(4))


FUNCTIONS = {
    "branin": (branin, [(-5.0, 10.0), (0.0, 15.0)], 0.397887357729738),
    "hartmann6": (hartmann6, [(0.0, 1.0)] * 6, -3.32236801141551),
}
VARIANTS = {
    "tpe": lambda seed: optuna.samplers.TPESampler(seed=seed),
    "gp": lambda seed: optuna.samplers.GPSampler(seed=seed),
}


def run_once(job):
    fname, vname, concurrent, seed, trials = job
    f, bounds, minimum = FUNCTIONS[fname]
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    sampler = VARIANTS[vname](seed)
    study = optuna.create_study(sampler=sampler, direction="minimize")
    running = []  # (finish, number, trial, value)
    now, asked, best = 0.0, 0, math.inf
    while asked < trials or running:
        while asked < trials and len(running) < concurrent:
            t = study.ask()
            x = [t.suggest_float("x%d" % d, lo, hi) for d, (lo, hi) in enumerate(bounds)]
            heapq.heappush(running, (now + duration(seed, t.number), t.number, t, f(x)))
            asked += 1
        now, _, t, v = heapq.heappop(running)
        study.tell(t, v)
        best = min(best, v)
    return "optuna %s %s %d %d %.17g" % (fname, vname, concurrent, seed, best - minimum)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=multiprocessing.cpu_count())
    ap.add_argument("--functions", default="branin,hartmann6")
    ap.add_argument("--variants", default="tpe")
    ap.add_argument("--concurrency", default="1,4")
    ap.add_argument("--first-seed", type=int, default=0)
    a = ap.parse_args()
    jobs = []
    for fname in a.functions.split(","):
        for vname in a.variants.split(","):
            for concurrent in (int(c) for c in a.concurrency.split(",")):
                jobs += [(fname, vname, concurrent, s, a.trials)
                         for s in range(a.first_seed, a.first_seed + a.seeds)]
    with multiprocessing.Pool(a.jobs) as pool:
        for line in pool.imap(run_once, jobs, chunksize=4):
            print(line, flush=True)
    print("# optuna %s, %d runs" % (optuna.__version__, len(jobs)), file=sys.stderr)


if __name__ == "__main__":
    main()
