"""The project's first import, done by one session while the others wait: every entry script (app.py and
pages/*.py) imports this module before anything else.

Streamlit runs each session's script in a thread of its own. On a fresh server a whole class arrives at
once, and each thread would import torch, triton and softmax_core at the same time. Python locks each module
while it runs, not the import as a whole: a thread that enters a package through one submodule
(`softmax_core.traffic`) holds that submodule's lock while it waits for the package, and a thread
inside the package's __init__ then waits for that submodule: Python breaks the cycle with `_DeadlockError`,
or hands one thread the half-initialised module (`module 'softmax_core' has no attribute ...`). torch and
triton have cycles of their own and fail the same way.

This module's own lock serialises it: the first thread runs the imports below, every other thread waits on
this one module (holding no other import lock, so no cycle can form) and then finds them all loaded. What
it loads is what every page needs (the home page's imports); a page's own extra modules are imported after
it, when their shared roots are complete. tests/serve/test_concurrent_imports.py starts many threads on it.
"""
import numpy  # noqa: F401
import pandas  # noqa: F401

from explorer_ui.launcher import import_library

# The explorer's choice, made before any kernel is defined (on a machine without a GPU the real kernels run in
# Triton's interpreter: the lesson on a laptop), then every module of the library and the packages beside it,
# here under this module's lock. softmax_core loads its names on first use; were that first use left to the
# pages, the sessions' threads would meet in its imports as described above.
import_library()
from explorer_ui import layout  # noqa: F401  the page setup every page calls: i18n, data, registry, prewarm
