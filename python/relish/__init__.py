"""relish - the Python side of relish (docs/python.md).

    import relish
    c = relish.Client()                       # the service's unix socket
    exp = c.submit("examples/digits/digits.yaml")
    for e in c.follow(exp["id"]):             # progress until it ends
        print(e["status"], e["trials"]["completed"])
    df = c.trials_dataframe(exp["id"])        # params and final metrics as columns

- relish.Client: the HTTP API of `relish serve` (docs/api.md), standard
  library only; pandas only for the *_dataframe methods.
- relish.trial: the trial contract for Python trials (docs/trials.md),
  also importable as relish_trial from the examples.
"""

from .client import Client, RelishError, DEFAULT_SOCKET  # noqa: F401

__version__ = "0.1.0"
__all__ = ["Client", "RelishError", "DEFAULT_SOCKET", "trial"]


def __getattr__(name):
    # relish.trial on first use: a notebook that only reads results never
    # imports the trial helper.
    if name == "trial":
        import importlib
        return importlib.import_module(".trial", __name__)
    raise AttributeError("module 'relish' has no attribute %r" % name)
