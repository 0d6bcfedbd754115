"""relish.trial - the relish trial contract as a plain Python loop
(also importable as relish_trial from examples/, the name trials use).

Standard library only (torch is used for save/load when it is installed,
never imported here otherwise).  One loop serves all three modes of
docs/trials.md:

    import relish.trial as rt               # or: import relish_trial as rt

    data = load_data()                      # paid once per process
    for seg in rt.segments():               # oneshot: 1 pass; warm/worker: many
        model = build(seg.params)
        state = seg.load()                  # None on the first segment
        start = state["epoch"] if state else 0
        for epoch in range(start + 1, seg.to + 1):
            acc = train_one_epoch(model, data)
            seg.report(epoch, accuracy=acc)         # RELISH epoch=3 accuracy=0.91
            seg.save({"epoch": epoch, "model": model.state_dict()})

- oneshot: the segment comes from RELISH_* variables; the loop runs once.
- warm: the first segment from the variables; after each pass the helper
  prints RELISH_DONE and waits on stdin for {"cmd":"run",...} (next segment
  of the same trial) or {"cmd":"stop"}.
- worker: the helper prints RELISH_READY, then each stdin command is one
  segment, possibly of another trial (seg.trial_id, seg.params change).

Outside relish (no RELISH_MODE) the loop runs once with params from
defaults=..., from 0 to default_to, which makes a trial script runnable by hand;
seg.save() then keeps nothing and says so once on stderr.

Checkpoints: seg.save(state) uses torch.save when torch is imported; otherwise
JSON for plain data, and joblib or pickle for anything else (a scikit-learn
model: seg.save({"model": SGDClassifier()})); seg.load() reads all of them.

Every line report() prints is also kept in the checkpoint folder
(relish-reports.txt); each segment starts by printing again the kept lines
past its start.  A checkpoint past RELISH_RESOURCE_FROM means relish died
after this trial reported and saved those epochs, perhaps before it read
the lines; the loop above does not train them again, so this is how their
values reach relish (it stores each value once, docs/trials.md).
"""

import json
import math
import os
import sys

__all__ = ["Segment", "segments", "setup_torch", "mode"]

_METRIC_NAME_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-")


def mode():
    """The contract mode relish started this process in (default oneshot)."""
    return os.environ.get("RELISH_MODE", "oneshot")


def _num(v):
    """Whole numbers as int (range() wants them), others as float."""
    f = float(v)
    return int(f) if f.is_integer() else f


class Segment:
    """One segment [start, to] of one trial."""

    def __init__(self, trial_id, params, start, to, checkpoint_dir):
        self.trial_id = trial_id
        self.params = params
        self.start = start          # resource already trained (RELISH_RESOURCE_FROM)
        self.to = to                # train up to and including this (RELISH_RESOURCE_TO)
        self.checkpoint_dir = checkpoint_dir
        self.resource = os.environ.get("RELISH_RESOURCE", "epoch")

    def report(self, resource, **metrics):
        """Print one metric line: RELISH <resource>=R name=value ..."""
        parts = ["%s=%s" % (self.resource, _fmt(resource))]
        for k, v in metrics.items():
            if not k or not (k[0].isalpha() or k[0] == "_") or set(k) - _METRIC_NAME_OK:
                raise ValueError("metric name %r: use letters, digits, _ . / -" % k)
            v = float(v)
            if not math.isfinite(v):
                continue  # relish takes finite numbers only; leave it out
            parts.append("%s=%s" % (k, _fmt(v)))
        line = "RELISH " + " ".join(parts)
        self._keep(line)
        print(line, flush=True)

    _REPORTS = "relish-reports.txt"

    def _keep(self, line):
        if not self.checkpoint_dir:
            return
        os.makedirs(self.checkpoint_dir, exist_ok=True)
        with open(os.path.join(self.checkpoint_dir, self._REPORTS), "a") as f:
            f.write(line + "\n")

    def _replay(self):
        """Print again the kept lines past this segment's start."""
        path = os.path.join(self.checkpoint_dir or ".", self._REPORTS)
        if not self.checkpoint_dir or not os.path.exists(path):
            return
        key = self.resource + "="
        with open(path) as f:
            for line in f:
                for p in line.split()[1:]:
                    if p.startswith(key):
                        try:
                            past = float(p[len(key):]) > float(self.start)
                        except ValueError:
                            past = False
                        if past:
                            print(line.rstrip("\n"), flush=True)
                        break

    # Checkpoints: torch.save when torch is imported (tensors, modules' state
    # dicts, and any other picklable object); else JSON when the state is
    # plain data, else joblib (when imported, as scikit-learn does: numpy
    # arrays stored efficiently) or pickle, so a scikit-learn model saves as
    # is.  load() tells the formats apart by their first bytes.  Written to a
    # temporary name, then renamed, so a kill mid-save leaves the previous
    # checkpoint intact.  Outside relish there is no checkpoint folder:
    # save() keeps nothing and says so once (set RELISH_CHECKPOINT_DIR to try
    # checkpoints by hand).
    _told_no_dir = False

    def _path(self, name):
        return os.path.join(self.checkpoint_dir or ".", name)

    def _no_dir(self):
        if not Segment._told_no_dir:
            Segment._told_no_dir = True
            print("relish_trial: not run by relish (no RELISH_CHECKPOINT_DIR): seg.save() keeps "
                  "nothing; set RELISH_CHECKPOINT_DIR=DIR to keep checkpoints by hand",
                  file=sys.stderr, flush=True)

    def save(self, state, name="checkpoint.pt"):
        if not self.checkpoint_dir:
            self._no_dir()
            return
        os.makedirs(self.checkpoint_dir, exist_ok=True)
        path = self._path(name)
        tmp = path + ".tmp"
        torch = sys.modules.get("torch")
        if torch is not None:
            torch.save(state, tmp)
        else:
            try:
                text = json.dumps(state)
            except (TypeError, ValueError):
                text = None  # a model, an array: not JSON
            if text is not None:
                with open(tmp, "w") as f:
                    f.write(text)
            elif sys.modules.get("joblib") is not None:
                sys.modules["joblib"].dump(state, tmp)
            else:
                import pickle
                with open(tmp, "wb") as f:
                    pickle.dump(state, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)

    def load(self, name="checkpoint.pt", map_location="cpu"):
        """The saved state, or None when this trial has no checkpoint yet.
        Only load checkpoints this trial wrote: pickle runs code it is given."""
        path = self._path(name)
        if not self.checkpoint_dir or not os.path.exists(path):
            return None
        with open(path, "rb") as f:
            head = f.read(2)
        if head[:1] in (b"{", b"[", b'"') or head[:1].isdigit() or head[:1] in (b"-", b"t", b"f", b"n"):
            with open(path) as f:
                return json.load(f)
        torch = sys.modules.get("torch")
        if torch is not None and head == b"PK":  # torch.save's zip format
            return torch.load(path, map_location=map_location)
        joblib = sys.modules.get("joblib")
        if joblib is not None:
            return joblib.load(path)  # reads plain pickles too
        import pickle
        with open(path, "rb") as f:
            return pickle.load(f)

    def __repr__(self):
        return "Segment(%s, %s..%s, %s)" % (self.trial_id, self.start, self.to, self.params)


def _fmt(v):
    v = float(v)
    return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)


def _from_env(defaults, default_to):
    params = dict(defaults or {})
    if "RELISH_PARAMS" in os.environ:
        params.update(json.loads(os.environ["RELISH_PARAMS"]))
    return Segment(
        os.environ.get("RELISH_TRIAL_ID", "local"),
        params,
        _num(os.environ.get("RELISH_RESOURCE_FROM", 0)),
        _num(os.environ.get("RELISH_RESOURCE_TO", default_to)),
        os.environ.get("RELISH_CHECKPOINT_DIR", ""),
    )


def _next_command(prev, defaults):
    """Read stdin until a command; None for stop or end of input."""
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        cmd = json.loads(line)
        if cmd.get("cmd") == "stop":
            return None
        if cmd.get("cmd") != "run":
            print("relish_trial: unknown command %r" % cmd.get("cmd"), file=sys.stderr, flush=True)
            continue
        trial_id = cmd.get("trial_id", prev.trial_id if prev else "local")
        params = dict(defaults or {})
        if "params" in cmd:
            params.update(cmd["params"])
        elif prev is not None and prev.trial_id == trial_id:
            params.update(prev.params)  # warm mode: same trial, same params
        return Segment(
            trial_id,
            params,
            _num(cmd["from"]),
            _num(cmd["to"]),
            cmd.get("checkpoint_dir", prev.checkpoint_dir if prev else ""),
        )
    return None


def segments(defaults=None, default_to=10):
    """Yield the segments this process must train, in every mode.

    defaults: parameter values used when relish does not give them (running
    by hand).  default_to: the end resource when RELISH_RESOURCE_TO is unset.
    After the loop body returns for a segment, the helper announces its end
    (warm/worker) and waits for the next command.
    """
    m = mode()
    if m == "worker":
        print("RELISH_READY", flush=True)
        seg = _next_command(None, defaults)
        while seg is not None:
            seg._replay()
            yield seg
            print("RELISH_DONE to=%s" % _fmt(seg.to), flush=True)
            seg = _next_command(seg, defaults)
        return
    seg = _from_env(defaults, default_to)
    seg._replay()
    yield seg
    if m != "warm":
        return
    while seg is not None:
        print("RELISH_DONE to=%s" % _fmt(seg.to), flush=True)
        seg = _next_command(seg, defaults)
        if seg is not None:
            seg._replay()
            yield seg


def setup_torch(torch):
    """Fit PyTorch to the share relish gave this trial: intra-op threads from
    OMP_NUM_THREADS, and on CUDA the allocator capped at RELISH_GPU_MEMORY_MIB
    (set_per_process_memory_fraction), so that packed trials stay inside their
    reservations.  Returns the device to use."""
    threads = int(os.environ.get("OMP_NUM_THREADS", "0") or 0)
    if threads > 0:
        torch.set_num_threads(threads)
    if torch.cuda.is_available():
        dev = torch.device("cuda", 0)
        mib = int(os.environ.get("RELISH_GPU_MEMORY_MIB", "0") or 0)
        if mib > 0:
            total = torch.cuda.get_device_properties(dev).total_memory
            torch.cuda.set_per_process_memory_fraction(min(1.0, mib * 2**20 / total), dev)
        return dev
    return torch.device("cpu")
