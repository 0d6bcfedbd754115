#!/usr/bin/python3
"""Digits: a PyTorch trial for relish (docs/trials.md).

sklearn's bundled 8x8 digits (1,797 images, no download), a fixed 80/20
split, and two model families chosen by the `model` parameter:
  mlp  64 -> hidden -> hidden/2 -> 10, ReLU, dropout
  cnn  conv(1->c,3) ReLU conv(c->2c,3) ReLU maxpool(2) -> hidden -> 10
Parameters (RELISH_PARAMS, defaults in DEFAULTS): model, lr, hidden, batch,
dropout, weight_decay, channels.  Each epoch prints
  RELISH epoch=E accuracy=A loss=L
(validation accuracy and loss) and saves model + optimizer with torch.save,
so a later segment resumes where this one stopped.  Works in oneshot, warm
and worker modes through examples/relish_trial.py; in warm and worker modes
the imports and the data set are loaded once per process.
Run by hand:  /usr/bin/python3 examples/digits/train.py  (10 epochs, MLP)
bench/optuna_digits.py imports load_data, build, train_epoch and evaluate
from here, so Optuna's reference run trains exactly the same objective.
"""
import os
import sys
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import relish_trial as rt  # noqa: E402

t0 = time.time()
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402

DEFAULTS = {"model": "mlp", "lr": 0.01, "hidden": 64, "batch": 64, "dropout": 0.1,
            "weight_decay": 0.0, "channels": 8}


def load_data():
    d = load_digits()
    x = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1) / 16.0  # N,1,8,8
    y = torch.tensor(d.target, dtype=torch.long)
    g = torch.Generator().manual_seed(0)
    perm = torch.randperm(len(y), generator=g)
    cut = int(0.8 * len(y))
    tr, va = perm[:cut], perm[cut:]
    return x[tr], y[tr], x[va], y[va]


def build(p):
    h = int(p["hidden"])
    if p["model"] == "cnn":
        c = int(p["channels"])
        return nn.Sequential(
            nn.Conv2d(1, c, 3, padding=1), nn.ReLU(),
            nn.Conv2d(c, 2 * c, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(float(p["dropout"])),
            nn.Linear(2 * c * 16, h), nn.ReLU(), nn.Linear(h, 10))
    if p["model"] != "mlp":
        raise SystemExit("train.py: model must be mlp or cnn, got %r" % p["model"])
    return nn.Sequential(
        nn.Flatten(), nn.Linear(64, h), nn.ReLU(), nn.Dropout(float(p["dropout"])),
        nn.Linear(h, max(h // 2, 10)), nn.ReLU(), nn.Linear(max(h // 2, 10), 10))


def train_epoch(model, opt, loss_fn, xtr, ytr, batch):
    """One pass over the training set in shuffled mini-batches."""
    model.train()
    perm = torch.randperm(len(ytr), device=xtr.device)
    for i in range(0, len(ytr), batch):
        idx = perm[i:i + batch]
        opt.zero_grad()
        loss_fn(model(xtr[idx]), ytr[idx]).backward()
        opt.step()


def evaluate(model, loss_fn, xva, yva):
    """Validation (accuracy, loss) as Python floats."""
    model.eval()
    with torch.no_grad():
        out = model(xva)
        vloss = loss_fn(out, yva).item()
        acc = (out.argmax(1) == yva).float().mean().item()
    return acc, vloss


def main():
    device = rt.setup_torch(torch)
    xtr, ytr, xva, yva = [t.to(device) for t in load_data()]
    print("digits: imports and data in %.2f s" % (time.time() - t0), file=sys.stderr, flush=True)
    loss_fn = nn.CrossEntropyLoss()
    for seg in rt.segments(defaults=DEFAULTS, default_to=10):
        p = seg.params
        torch.manual_seed(zlib.crc32(seg.trial_id.encode()))
        model = build(p).to(device)
        opt = torch.optim.Adam(model.parameters(), lr=float(p["lr"]),
                               weight_decay=float(p["weight_decay"]))
        state = seg.load()
        start = 0
        if state is not None:
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["opt"])
            start = state["epoch"]
        for epoch in range(start + 1, seg.to + 1):
            train_epoch(model, opt, loss_fn, xtr, ytr, int(p["batch"]))
            acc, vloss = evaluate(model, loss_fn, xva, yva)
            seg.report(epoch, accuracy=acc, loss=vloss)
            seg.save({"epoch": epoch, "model": model.state_dict(), "opt": opt.state_dict()})


if __name__ == "__main__":
    main()
