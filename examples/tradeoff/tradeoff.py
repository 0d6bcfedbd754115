#!/usr/bin/python3
"""Tradeoff: accuracy against model size under a compute budget, a trial
with several objectives and a constraint (examples/tradeoff/tradeoff.yaml,
docs/search.md "Several objectives").

It trains the digits models of examples/digits/train.py (same data, split,
models and training) and prints at every epoch
  RELISH epoch=E accuracy=A size_k=S kmacs=M
where size_k is the model's parameter count in thousands and kmacs the
multiply-accumulates of one forward pass per image in thousands (a
latency proxy that, unlike a timing, is the same on every machine).  Both
are known from the first epoch on; the spec maximises accuracy, minimises
size_k and keeps kmacs <= 100.
"""
import os
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "digits"))
import relish_trial as rt  # noqa: E402
import train as digits  # noqa: E402  (examples/digits/train.py)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402


def kmacs(model):
    """Multiply-accumulates of one forward pass of an 8x8 image, in thousands."""
    macs, side = 0, 8
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            k = m.kernel_size[0] * m.kernel_size[1]
            macs += k * m.in_channels * m.out_channels * side * side
        elif isinstance(m, nn.MaxPool2d):
            side //= 2
        elif isinstance(m, nn.Linear):
            macs += m.in_features * m.out_features
    return macs / 1000.0


def main():
    device = rt.setup_torch(torch)
    xtr, ytr, xva, yva = [t.to(device) for t in digits.load_data()]
    loss_fn = nn.CrossEntropyLoss()
    for seg in rt.segments(defaults=digits.DEFAULTS, default_to=5):
        p = seg.params
        torch.manual_seed(zlib.crc32(seg.trial_id.encode()))
        model = digits.build(p).to(device)
        size_k = sum(t.numel() for t in model.parameters()) / 1000.0
        cost = kmacs(model)
        opt = torch.optim.Adam(model.parameters(), lr=float(p["lr"]),
                               weight_decay=float(p["weight_decay"]))
        state = seg.load()
        start = 0
        if state is not None:
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["opt"])
            start = state["epoch"]
        for epoch in range(start + 1, seg.to + 1):
            digits.train_epoch(model, opt, loss_fn, xtr, ytr, int(p["batch"]))
            acc, _ = digits.evaluate(model, loss_fn, xva, yva)
            seg.report(epoch, accuracy=acc, size_k=size_k, kmacs=cost)
            seg.save({"epoch": epoch, "model": model.state_dict(), "opt": opt.state_dict()})


if __name__ == "__main__":
    main()
