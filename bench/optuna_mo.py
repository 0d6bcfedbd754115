#!/usr/bin/python3
"""optuna_mo.py - Optuna 5's default multi-objective sampler on the
hypervolume benchmark of bench/bench_mo.c, run the same way, so the two
can be printed side by side (docs/benchmarks.md, "Several objectives").
Optuna 5 runs from its source (PYTHONPATH names the folder; docs/benchmarks.md
says how to get it).

Problems, both minimised over [0, 1]^n: ZDT1 with 6 variables and DTLZ2
with 4 variables and 2 objectives.  Sampler: TPESampler(seed=seed), what a
study with two directions uses by default.  A run: `trials` trials one at
a time; its hypervolume is that of the feasible points' front against the
reference point (1.1, 1.1), computed here and in bench_mo.c by the same
sweep.

Prints one line per run: "optuna PROBLEM SEED HYPERVOLUME".
Usage: optuna_mo.py [--seeds N] [--first-seed S] [--trials N] [--jobs N]
"""
import argparse
import math
import multiprocessing
import sys
import warnings

import optuna

if not optuna.__version__.startswith("5."):
    sys.exit("optuna_mo.py: needs Optuna 5 (found %s)" % optuna.__version__)

REF = (1.1, 1.1)


def zdt1(x):
    f1 = x[0]
    g = 1 + 9 * sum(x[1:]) / (len(x) - 1)
    return f1, g * (1 - math.sqrt(f1 / g))


def dtlz2(x):
    g = sum((v - 0.5) ** 2 for v in x[1:])
    return (1 + g) * math.cos(x[0] * math.pi / 2), (1 + g) * math.sin(x[0] * math.pi / 2)


PROBLEMS = {"zdt1": (zdt1, 6), "dtlz2": (dtlz2, 4)}


def hypervolume(points):
    """2-D hypervolume of the points below REF (a sweep over f1)."""
    pts = sorted(p for p in points if p[0] < REF[0] and p[1] < REF[1])
    hv, best2 = 0.0, REF[1]
    for f1, f2 in pts:
        if f2 < best2:
            hv += (REF[0] - f1) * (best2 - f2)
            best2 = f2
    return hv


def run_once(job):
    pname, seed, trials = job
    f, n = PROBLEMS[pname]
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    study = optuna.create_study(directions=["minimize", "minimize"],
                                sampler=optuna.samplers.TPESampler(seed=seed))
    points = []
    for _ in range(trials):
        t = study.ask()
        x = [t.suggest_float("x%d" % d, 0.0, 1.0) for d in range(n)]
        v = f(x)
        study.tell(t, v)
        points.append(v)
    return "optuna %s %d %.17g" % (pname, seed, hypervolume(points))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=multiprocessing.cpu_count())
    ap.add_argument("--problems", default="zdt1,dtlz2")
    a = ap.parse_args()
    jobs = [(p, s, a.trials) for p in a.problems.split(",")
            for s in range(a.first_seed, a.first_seed + a.seeds)]
    with multiprocessing.Pool(a.jobs) as pool:
        for line in pool.imap(run_once, jobs):
            print(line, flush=True)
    print("# optuna %s, %d runs" % (optuna.__version__, len(jobs)), file=sys.stderr)


if __name__ == "__main__":
    main()
