#!/usr/bin/python3
"""gpu_trial.py - a small PyTorch CUDA trial for scripts/gpu-check.sh.

Follows the relish trial contract (docs/gpu.md, DESIGN.md "Trial contract"):
  RELISH_PARAMS          JSON: width, depth, batch_size, lr, ballast_mib,
                         steps_per_epoch (all optional)
  RELISH_RESOURCE_FROM/TO  train epochs FROM+1 .. TO
  RELISH_CHECKPOINT_DIR  resume from / save to model.pt here
  RELISH_GPU_MEMORY_MIB  the reservation: the allocator is capped to it
Prints one metrics line per epoch, e.g.
  RELISH epoch=3 accuracy=0.9123 loss=0.31 samples_per_s=81234 gpu_peak_mib=1830
and exits 0 at the end of its segment.  ballast_mib holds that much device
memory for the whole segment, so packing decisions have something to bite.

The task is synthetic (a fixed random teacher network labels Gaussian
inputs), so no data set has to be present on the GPU machine and the
accuracy still rises epoch by epoch.

Dry run (GPU_CHECK_FAKE_STATE=FILE, set by `GPU_CHECK_DRY_RUN=1
scripts/gpu-check.sh`): no torch, no GPU.  The trial "holds" a known amount
of device memory (300 + ballast_mib + width/2 MiB at 40 % SM) by appending
"DEV PID MIB SM" to FILE, which the scripted NVML stand-in
(tests/support/libnvidia-ml-standin.c) reports as this process's, and
sleeps through its epochs; the same contract lines come out.
"""
import json
import os
import sys
import time

torch = None  # imported in main(): a dry run never needs it

METRIC_PREFIX = "RELISH"  # the contract's metric-line prefix (src/exec/contract.h)
IN_DIM, CLASSES = 64, 10


def params():
    p = {"width": 512, "depth": 3, "batch_size": 256, "lr": 0.05,
         "ballast_mib": 0, "steps_per_epoch": 200}
    p.update(json.loads(os.environ.get("RELISH_PARAMS", "{}") or "{}"))
    return p


def teacher_batch(gen, n, dev, teacher):
    x = torch.randn(n, IN_DIM, generator=gen, device=dev)
    with torch.no_grad():
        y = teacher(x).argmax(dim=1)
    return x, y


def fake_main(state):
    """The dry run: memory and utilisation through the NVML stand-in."""
    p = params()
    first = int(float(os.environ.get("RELISH_RESOURCE_FROM", "0")))
    last = int(float(os.environ.get("RELISH_RESOURCE_TO", "3")))
    need = 300 + int(p["ballast_mib"]) + int(p["width"]) // 2
    cap = int(os.environ.get("RELISH_GPU_MEMORY_MIB", "0") or 0)
    if cap and cap < need:
        print(f"RuntimeError: CUDA out of memory. Tried to allocate {need} MiB "
              f"(reserved {cap} MiB)", file=sys.stderr)
        return 1
    dev = os.environ.get("CUDA_VISIBLE_DEVICES", "GPU-0").rsplit("-", 1)[-1]
    with open(state, "a") as f:
        f.write(f"{dev} {os.getpid()} {need} 40\n")
    for epoch in range(first + 1, last + 1):
        time.sleep(0.3)
        acc = 1.0 - 0.5 / (epoch + int(p["width"]) / 1024)
        print(f"{METRIC_PREFIX} epoch={epoch} accuracy={acc:.4f} gpu_peak_mib={need}", flush=True)
    return 0


def main():
    global torch
    if os.environ.get("GPU_CHECK_FAKE_STATE"):
        return fake_main(os.environ["GPU_CHECK_FAKE_STATE"])
    import torch as torch_module
    torch = torch_module
    if not torch.cuda.is_available():
        print("gpu_trial: CUDA is not available", file=sys.stderr)
        return 3
    p = params()
    dev = torch.device("cuda")
    first = int(float(os.environ.get("RELISH_RESOURCE_FROM", "0")))
    last = int(float(os.environ.get("RELISH_RESOURCE_TO", "3")))
    ckdir = os.environ.get("RELISH_CHECKPOINT_DIR", "")
    cap = os.environ.get("RELISH_GPU_MEMORY_MIB")
    if cap:
        total = torch.cuda.get_device_properties(dev).total_memory
        frac = min(1.0, int(cap) * 1024 * 1024 / total)
        torch.cuda.set_per_process_memory_fraction(frac, dev)

    torch.manual_seed(1234)  # the same teacher for every trial
    teacher = torch.nn.Sequential(torch.nn.Linear(IN_DIM, 128), torch.nn.Tanh(),
                                  torch.nn.Linear(128, CLASSES)).to(dev)
    layers, w = [], int(p["width"])
    d_in = IN_DIM
    for _ in range(int(p["depth"])):
        layers += [torch.nn.Linear(d_in, w), torch.nn.ReLU()]
        d_in = w
    model = torch.nn.Sequential(*layers, torch.nn.Linear(d_in, CLASSES)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=float(p["lr"]), momentum=0.9)
    ballast = None
    if int(p["ballast_mib"]) > 0:
        ballast = torch.empty(int(p["ballast_mib"]) * 1024 * 1024, dtype=torch.uint8, device=dev)

    ck = os.path.join(ckdir, "model.pt") if ckdir else ""
    if ck and os.path.exists(ck):
        state = torch.load(ck, map_location=dev)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        first = max(first, int(state["epoch"]))

    gen = torch.Generator(device=dev)
    gen.manual_seed(99)
    xval, yval = teacher_batch(gen, 4096, dev, teacher)
    bs, steps = int(p["batch_size"]), int(p["steps_per_epoch"])
    lossf = torch.nn.CrossEntropyLoss()
    for epoch in range(first + 1, last + 1):
        gen.manual_seed(1000 + epoch)
        t0 = time.perf_counter()
        model.train()
        for _ in range(steps):
            x, y = teacher_batch(gen, bs, dev, teacher)
            opt.zero_grad(set_to_none=True)
            loss = lossf(model(x), y)
            loss.backward()
            opt.step()
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        model.eval()
        with torch.no_grad():
            acc = (model(xval).argmax(dim=1) == yval).float().mean().item()
        if ck:
            os.makedirs(ckdir, exist_ok=True)
            tmp = ck + ".tmp"
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": epoch}, tmp)
            os.replace(tmp, ck)  # a checkpoint is whole or absent
        peak = torch.cuda.max_memory_reserved(dev) // (1024 * 1024)
        print(f"{METRIC_PREFIX} epoch={epoch} accuracy={acc:.4f} loss={loss.item():.4f} "
              f"samples_per_s={bs * steps / dt:.0f} gpu_peak_mib={peak}", flush=True)
    del ballast
    return 0


if __name__ == "__main__":
    sys.exit(main())
