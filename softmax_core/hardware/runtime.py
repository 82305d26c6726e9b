"""Where kernels run: on the GPU when there is one, in Triton's CPU interpreter when there is not.

Triton decides at `@triton.jit` time whether a kernel is compiled or interpreted, from the environment
variable TRITON_INTERPRET. So this module must be imported before any kernel is defined; the package's
`__init__` does that first. Users set nothing: a laptop without CUDA simply gets the interpreter.
"""
from __future__ import annotations

import contextlib
import os
import threading

from softmax_core.words import Code, Coded, describe

# A child process that only compiles kernels for a GPU target (see compile.py) must never interpret:
# the interpreter patches triton's language layer and compiling breaks in the same process.
OFFLINE_COMPILER_ENV = "SOFTMAX_CORE_OFFLINE_COMPILER"


def _choose_interpreter() -> bool:
    if os.environ.get(OFFLINE_COMPILER_ENV) == "1":
        os.environ.pop("TRITON_INTERPRET", None)
        return False
    if "TRITON_INTERPRET" in os.environ:  # the user chose explicitly
        return os.environ["TRITON_INTERPRET"] == "1"
    import torch

    if torch.cuda.is_available():
        return False
    os.environ["TRITON_INTERPRET"] = "1"
    return True


def _interpret_triton_library() -> int:
    """Make Triton's own library functions interpretable when triton was imported before us.

    `@triton.jit` picks compiled or interpreted when it runs. Triton's library (`tl.cdiv`, `tl.max`,
    `tl.sum`, ...) is itself written with `@triton.jit`, so if `import triton` came before we switched the
    interpreter on, those functions were made for the compiler, and an interpreted kernel calling them
    fails ("Cannot call @triton.jit'd outside of the scope of a kernel"). Rebuild each of them as an
    interpreted function, in every triton.language module that names it (one new object per old one, so
    identity checks inside the interpreter still hold). Returns how many names were rebound."""
    import sys

    if "triton" not in sys.modules:
        return 0
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    rebuilt: dict[int, object] = {}
    count = 0
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "triton.language" or name.startswith("triton.language.")):
            continue
        for attr, value in list(vars(module).items()):
            if type(value) is JITFunction:   # exactly: an InterpretedFunction is left alone
                if id(value) not in rebuilt:
                    rebuilt[id(value)] = InterpretedFunction(value.fn)
                setattr(module, attr, rebuilt[id(value)])
                count += 1
    return count


INTERPRETED: bool = _choose_interpreter()
if INTERPRETED:
    _interpret_triton_library()
KERNEL_DEVICE_TYPE = "cpu" if INTERPRETED else "cuda"


def kernel_device():
    """The device our kernels read and write: the GPU, or the CPU under the interpreter."""
    import torch

    return torch.device("cpu") if INTERPRETED else torch.device("cuda", torch.cuda.current_device())


class Backend(Code):
    """What runs the kernels."""
    INTERPRETER = "interpreter"          # no GPU: Triton's interpreter on the CPU
    GPU = "gpu"                          # compiled by Triton for the GPU named by the figure `name`


def backend() -> Coded:
    """Which backend runs the kernels here, as a code and figures (softmax_core.words says it)."""
    if INTERPRETED:
        return Coded.of(Backend.INTERPRETER)
    import torch

    return Coded.of(Backend.GPU, name=torch.cuda.get_device_name())


def backend_description() -> str:
    """`backend()` in English, for the command line."""
    return describe(backend())


# Triton's interpreter swaps parts of triton.language for its own versions while a kernel runs and puts
# them back afterwards: two kernels interpreted at once in two threads (two app sessions) would undo each
# other's patches. So interpreted launches take turns; on a GPU they need no lock.
_INTERPRETER_LOCK = threading.Lock()


def one_launch_at_a_time():
    """Wrap every kernel launch in this: a lock under the interpreter, nothing on a GPU."""
    return _INTERPRETER_LOCK if INTERPRETED else contextlib.nullcontext()
