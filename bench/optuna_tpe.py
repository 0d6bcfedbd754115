#!/usr/bin/python3
"""optuna_tpe.py - Optuna's TPESampler measured the way bench/bench_tpe.c
measures relish's TPE, so scripts/bench-tpe.sh can print both in one command.

Same 4-D mixed space and objective (log-uniform lr, log int hidden, 5-way
batch choice, uniform dropout).  For each history size N a study is filled
with N completed trials, then TIMED ask+tell pairs (default 20) are timed
with TPESampler defaults (10 start-up trials, 24 candidates, independent
sampling); the median over REPS studies (default 3) is printed, CPU and wall.

The history is filled with create_trial/add_trials from uniformly random
configurations rather than by Optuna's own ask/tell: filling 1,000 trials
that way takes about as long as 1,000 timed pairs, and Optuna's TPE scores
every candidate against every kernel, so its cost depends on how many trials
exist, not on where they lie.

Usage: optuna_tpe.py [sizes...]   (default 100 1000)
"""
import math
import random
import statistics
import sys
import time

import optuna
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

BATCH = [16, 32, 64, 128, 256]
PENALTY = {16: 0.3, 32: 0.1, 64: 0.0, 128: 0.05, 256: 0.2}
DISTS = {
    "lr": FloatDistribution(1e-5, 1e-1, log=True),
    "hidden": IntDistribution(16, 1024, log=True),
    "batch": CategoricalDistribution(BATCH),
    "dropout": FloatDistribution(0.0, 0.7),
}
TIMED = 20
REPS = 3


def objective(p):
    a = math.log10(p["lr"]) + 2.5
    h = math.log2(p["hidden"]) - 7
    d = p["dropout"] - 0.2
    return a * a + h * h / 4 + PENALTY[p["batch"]] + d * d * 4


def random_params(rng):
    return {
        "lr": math.exp(rng.uniform(math.log(1e-5), math.log(1e-1))),
        "hidden": int(round(math.exp(rng.uniform(math.log(15.5), math.log(1024.5))))),
        "batch": rng.choice(BATCH),
        "dropout": rng.uniform(0.0, 0.7),
    }


def one_rep(size, seed):
    rng = random.Random(seed)
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))
    trials = []
    for _ in range(size):
        p = random_params(rng)
        p["hidden"] = min(max(p["hidden"], 16), 1024)
        trials.append(optuna.trial.create_trial(params=p, distributions=DISTS, value=objective(p)))
    study.add_trials(trials)
    c0, w0 = time.process_time(), time.perf_counter()
    for _ in range(TIMED):
        t = study.ask()
        p = {
            "lr": t.suggest_float("lr", 1e-5, 1e-1, log=True),
            "hidden": t.suggest_int("hidden", 16, 1024, log=True),
            "batch": t.suggest_categorical("batch", BATCH),
            "dropout": t.suggest_float("dropout", 0.0, 0.7),
        }
        study.tell(t, objective(p))
    return ((time.process_time() - c0) * 1e3 / TIMED, (time.perf_counter() - w0) * 1e3 / TIMED)


def main():
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sizes = [int(a) for a in sys.argv[1:]] or [100, 1000]
    for size in sizes:
        runs = [one_rep(size, r) for r in range(REPS)]
        cpu = statistics.median(r[0] for r in runs)
        wall = statistics.median(r[1] for r in runs)
        print(f"optuna {optuna.__version__} tpe ask+tell at {size} completed trials: "
              f"{cpu:.4f} ms per trial cpu, {wall:.4f} ms wall (median of {REPS} x {TIMED})")
        if size == 1000:
            print(f"optuna_tpe_ms_per_trial_at_1000={cpu:.4f}")


if __name__ == "__main__":
    main()
