"""relish_trial - relish.trial under the name the examples and docs/trials.md
import (`import relish_trial as rt`), installed beside the package by
`pip install ./python`, so that either name works once it is installed:
the same module object, not a copy.
"""

import sys

import relish.trial as _trial

sys.modules[__name__] = _trial
