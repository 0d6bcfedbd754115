#!/usr/bin/python3
"""Quickstart: the trial of examples/quickstart/quickstart.yaml.

A scikit-learn MLP on sklearn's bundled digits (1,797 8x8 images, no
download), trained one epoch at a time with partial_fit, from epoch --from
to epoch --to.  Every epoch prints one metric line on stdout, the format
relish reads (docs/trials.md):

    RELISH epoch=3 val_acc=0.91

The model is pickled into --checkpoint after every epoch, so the next
segment (relish runs a trial in segments: 0-1, 1-3, 3-9) goes on where this
one stopped.  The lines printed so far are kept in the checkpoint too: a
checkpoint past --from (relish was killed after this trial saved epochs it
may not have read) means those epochs are not trained again, but their
lines are printed again, as docs/trials.md ("Checkpoints") asks.  Plain
argparse and no relish code: any program that prints those lines and
resumes from its checkpoint folder is a trial.

Run by hand:  /usr/bin/python3 train.py --to 3 --checkpoint /tmp/ckpt
"""
import argparse
import os
import pickle
import warnings

from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--lr", type=float, default=0.01)
p.add_argument("--momentum", type=float, default=0.9)
p.add_argument("--hidden", type=int, default=64)
p.add_argument("--batch-size", type=int, default=64)
p.add_argument("--optimizer", choices=["sgd", "adam"], default="adam")
p.add_argument("--from", dest="start", type=float, default=0)
p.add_argument("--to", type=float, default=3)
p.add_argument("--checkpoint", default="")
a = p.parse_args()

x, y = load_digits(return_X_y=True)
x_train, x_val, y_train, y_val = train_test_split(x / 16.0, y, test_size=0.2, random_state=0)
classes = sorted(set(y))

path = os.path.join(a.checkpoint, "model.pkl") if a.checkpoint else ""
if path:
    os.makedirs(a.checkpoint, exist_ok=True)  # relish makes it; by hand, maybe not
if path and os.path.exists(path):
    with open(path, "rb") as f:
        state = pickle.load(f)
    model, done, lines = state["model"], state["epoch"], state.get("lines", {})
else:
    model = MLPClassifier(hidden_layer_sizes=(a.hidden,), solver=a.optimizer,
                          learning_rate_init=a.lr, momentum=a.momentum,
                          batch_size=a.batch_size, random_state=0)
    done, lines = 0, {}

# Epochs the checkpoint has past --from: printed again, not trained again.
for epoch in range(int(a.start) + 1, min(int(done), int(a.to)) + 1):
    if epoch in lines:
        print(lines[epoch], flush=True)

warnings.simplefilter("ignore", ConvergenceWarning)
for epoch in range(int(done) + 1, int(a.to) + 1):
    model.partial_fit(x_train, y_train, classes=classes)
    acc = model.score(x_val, y_val)
    lines[epoch] = f"RELISH epoch={epoch} val_acc={acc:.6f}"
    print(lines[epoch], flush=True)
    if path:
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            pickle.dump({"model": model, "epoch": epoch, "lines": lines}, f)
        os.replace(tmp, path)  # a segment killed mid-write keeps the last good one
