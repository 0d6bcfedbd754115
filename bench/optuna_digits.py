#!/usr/bin/python3
"""optuna_digits.py - Optuna 3.1's reference run of the digits benchmark.

The same objective relish runs in examples/digits: the model, data split,
epoch loop and evaluation are imported from examples/digits/train.py, and
the search space, trial budget, seed and resource range (min, max,
reduction factor) are read from the experiment spec, so the two sides
cannot drift apart.  Optuna runs TPESampler + HyperbandPruner(min_resource,
max_resource, reduction_factor) in its fastest way of using 2 cores found
for this workload: two processes sharing one JournalFileStorage, each
running half the trials with one torch/OpenMP thread (n_jobs=2 threads in
one process are slower: the GIL).  The wall time is measured around the
whole thing, process start and `import torch` included, as relish's is.

Usage:
  /usr/bin/python3 bench/optuna_digits.py SPEC [--procs 2] [--trials N]
      [--journal FILE] [--json]
Prints wall time, epochs trained (sum over trials of the epochs each
actually ran before finishing or being pruned), the best accuracy (best
value of a completed trial, i.e. the last-epoch accuracy of a trial trained
to max_resource) and trial counts.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

# JournalStorage is marked experimental in Optuna 3.1; say it once, here.
warnings.filterwarnings("ignore", message=".*JournalStorage is experimental.*")

HERE = os.path.dirname(os.path.abspath(__file__))
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def load_spec(path):
    import yaml
    with open(path) as f:
        spec = yaml.safe_load(f)
    sched = spec.get("schedule") or {}
    search = spec["search"]
    return {
        "space": search["space"],
        "trials": int(search.get("max_trials", 64)),
        "seed": int(search.get("seed", 0)),
        "n_startup": int(search.get("n_startup", 10)),
        "min": int(sched.get("min", 1)),
        "max": int(sched.get("max", 27)),
        "eta": int(sched.get("reduction_factor", 3)),
        "mode": spec.get("objective", {}).get("mode", "max"),
    }


def suggest(trial, space):
    """One parameter set from a relish search space (docs/spec.md types)."""
    p = {}
    for name, d in space.items():
        t = d["type"]
        when = d.get("when")
        if when:  # conditional: only while the earlier choice has a listed value
            (parent, vals), = when.items()
            if p.get(parent) not in (vals if isinstance(vals, list) else [vals]):
                continue
        if t == "fixed":
            p[name] = d["value"]
        elif t == "choice":
            p[name] = trial.suggest_categorical(name, d["values"])
        elif t in ("uniform", "loguniform"):
            p[name] = trial.suggest_float(name, float(d["low"]), float(d["high"]),
                                          log=(t == "loguniform"))
        elif t == "int":
            p[name] = trial.suggest_int(name, int(d["low"]), int(d["high"]),
                                        log=bool(d.get("log", False)))
        else:
            raise SystemExit("optuna_digits: parameter %s: type %r not mapped" % (name, t))
    return p


def journal_storage(path):
    """JournalStorage on a JournalFileStorage that retries a read which saw
    another process's line half-written.  Optuna 3.1's read_logs raises
    JSONDecodeError when a write lands while it iterates the file (the
    half line is followed by its rest); the read keeps no state from the
    failed pass, so trying again is safe, and costs nothing otherwise."""
    from optuna.storages import JournalFileStorage, JournalStorage

    class RetryingFileStorage(JournalFileStorage):
        def read_logs(self, log_number_from):
            for _ in range(100):
                try:
                    return super().read_logs(log_number_from)
                except json.JSONDecodeError:
                    time.sleep(0.005)
            return super().read_logs(log_number_from)

    return JournalStorage(RetryingFileStorage(path))


def worker(args):
    """One of the processes: n trials of the shared study."""
    import zlib
    import optuna
    sys.path.insert(0, os.path.join(HERE, "..", "examples", "digits"))
    import torch
    import train  # examples/digits/train.py: load_data, build, train_epoch, evaluate

    torch.set_num_threads(1)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    spec = load_spec(args.spec)
    xtr, ytr, xva, yva = train.load_data()
    loss_fn = torch.nn.CrossEntropyLoss()

    def objective(trial):
        p = dict(train.DEFAULTS)
        p.update(suggest(trial, spec["space"]))
        torch.manual_seed(zlib.crc32(("t%d" % trial.number).encode()))
        model = train.build(p)
        opt = torch.optim.Adam(model.parameters(), lr=float(p["lr"]),
                               weight_decay=float(p["weight_decay"]))
        acc = 0.0
        for epoch in range(1, spec["max"] + 1):
            train.train_epoch(model, opt, loss_fn, xtr, ytr, int(p["batch"]))
            acc, _ = train.evaluate(model, loss_fn, xva, yva)
            trial.report(acc, epoch)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return acc

    storage = journal_storage(args.journal)
    # Seeds differ per process: with one seed both would draw the same
    # start-up configurations.
    sampler = optuna.samplers.TPESampler(seed=spec["seed"] + args.worker,
                                         n_startup_trials=spec["n_startup"])
    pruner = optuna.pruners.HyperbandPruner(min_resource=spec["min"], max_resource=spec["max"],
                                            reduction_factor=spec["eta"])
    study = optuna.load_study(study_name="digits", storage=storage, sampler=sampler,
                              pruner=pruner)
    study.optimize(objective, n_trials=args.n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("spec")
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--trials", type=int, default=0, help="default: the spec's max_trials")
    ap.add_argument("--journal", default="")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--worker", type=int, default=-1, help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker >= 0:
        return worker(args)

    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    spec = load_spec(args.spec)
    trials = args.trials or spec["trials"]
    tmpdir = None
    if not args.journal:
        tmpdir = tempfile.TemporaryDirectory(prefix="optuna-digits-")
        args.journal = os.path.join(tmpdir.name, "journal.log")
    storage = journal_storage(args.journal)
    optuna.create_study(study_name="digits", storage=storage,
                        direction="maximize" if spec["mode"] == "max" else "minimize")

    env = dict(os.environ)
    for v in THREAD_VARS:
        env[v] = "1"
    t0 = time.monotonic()
    procs = []
    for k in range(args.procs):
        n = trials // args.procs + (1 if k < trials % args.procs else 0)
        procs.append(subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), args.spec, "--journal", args.journal,
             "--worker", str(k), "--n", str(n)], env=env))
    rcs = [p.wait() for p in procs]
    wall = time.monotonic() - t0
    if any(rcs):
        raise SystemExit("optuna_digits: a worker failed: exit codes %s" % rcs)

    study = optuna.load_study(study_name="digits", storage=storage)
    states = optuna.trial.TrialState
    all_trials = study.get_trials(deepcopy=False)
    # One intermediate value per epoch trained (steps 1..E).
    epochs = sum(max(t.intermediate_values, default=0) for t in all_trials)
    done = [t for t in all_trials if t.state == states.COMPLETE]
    pruned = sum(1 for t in all_trials if t.state == states.PRUNED)
    best = study.best_value if done else float("nan")
    res = {"tool": "optuna", "version": optuna.__version__, "spec": args.spec, "procs": args.procs,
           "trials": len(all_trials), "completed": len(done), "pruned": pruned,
           "wall_s": round(wall, 3), "epochs": epochs, "best_accuracy": best}
    if args.json:
        print(json.dumps(res))
    else:
        print("optuna %s: %d trials (%d completed, %d pruned), %d processes: wall %.2f s, "
              "%d epochs trained, best accuracy %.4f" % (res["version"], res["trials"], len(done),
                                                         pruned, args.procs, wall, epochs, best))
    return 0


if __name__ == "__main__":
    sys.exit(main())
