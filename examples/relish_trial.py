"""relish_trial - the trial side of relish, kept importable under this name.

The helper itself is relish.trial (python/relish/trial.py, installed with
`pip install ./python` or `make install`); docs/trials.md describes it.
Trial scripts beside this file (examples/*/train.py) keep writing
`import relish_trial as rt`: this module finds the package installed, or in
the source tree's python/ folder, and is the same module then.
"""

import os
import sys

try:
    import relish.trial as _trial
except ImportError:
    _here = os.path.dirname(os.path.abspath(__file__))
    for _p in (os.path.join(_here, "..", "python"), os.path.join(_here, "python")):
        if os.path.isdir(os.path.join(_p, "relish")):
            sys.path.insert(0, os.path.normpath(_p))
            break
    # a failed import may have left a stale "relish" behind (an empty
    # folder of that name on the path, left by a removed install, is a
    # namespace package without .trial): look again from the new path
    sys.modules.pop("relish", None)
    import relish.trial as _trial

sys.modules[__name__] = _trial
