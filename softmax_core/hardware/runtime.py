"""Where kernels run: on the GPU, or — when someone asks for it — in Triton's CPU interpreter.

Importing softmax_core chooses nothing and changes nothing: no environment variable is set and nothing of
triton is touched. A CUDA tensor runs the Triton kernels; a CPU tensor gets torch's own answer at torch's
speed, unless the interpreter was asked for. The explorer, its launcher and the test suite ask for it (on a
laptop the real kernel running on the CPU is the lesson), in one of two ways:

- set `TRITON_INTERPRET=1` in the environment before the process starts (Triton's own switch), or
- call `softmax_core.runtime.use_interpreter()` after `import softmax_core` and before the first softmax.

Triton decides at `@triton.jit` time whether a kernel is compiled or interpreted, from TRITON_INTERPRET. So
the choice must come before softmax_core's kernels are defined: they are defined when the first kernel
module is imported (the first `sc.softmax`, `sc.plan_softmax`, ...; `import softmax_core` defines none).
"""
from __future__ import annotations

import contextlib
import os
import sys
import threading

from softmax_core.words import Code, Coded, describe

# A child process that only compiles kernels for a GPU target (see compile.py) must never interpret:
# the interpreter patches triton's language layer and compiling breaks in the same process.
OFFLINE_COMPILER_ENV = "SOFTMAX_CORE_OFFLINE_COMPILER"
INTERPRET_ENV = "TRITON_INTERPRET"      # Triton's own switch, read by @triton.jit when a kernel is defined
# The modules whose import defines softmax_core's kernels: after any of them, the choice is made.
KERNEL_MODULES = ("softmax_core.kernels",)


class InterpreterChosenTooLate(RuntimeError):
    """use_interpreter() was called after softmax_core's kernels were defined as compiled kernels."""


def _interpreter_asked() -> bool:
    """What the environment asks for when this module is first imported. Reads, never writes, except in
    the offline compiler's own child, where the variable is removed so that its compiles are real."""
    if os.environ.get(OFFLINE_COMPILER_ENV) == "1":
        os.environ.pop(INTERPRET_ENV, None)
        return False
    return os.environ.get(INTERPRET_ENV) == "1"


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


INTERPRETED: bool = _interpreter_asked()
if INTERPRETED:
    _interpret_triton_library()
KERNEL_DEVICE_TYPE = "cpu" if INTERPRETED else "cuda"


def launch_phases() -> tuple[int, ...]:
    """The PHASE of each launch of a kernel whose programs share work and wait for each other: one launch on a
    GPU (PHASE 0, every program resident at once); under the interpreter, which runs programs one after
    another, a publishing launch (1) and then a finishing one (2)."""
    return (1, 2) if INTERPRETED else (0,)


def gpu_present() -> bool:
    """Whether torch sees a CUDA GPU (a question, not a choice)."""
    import torch

    return torch.cuda.is_available()


def use_interpreter() -> None:
    """Run softmax_core's kernels in Triton's interpreter, on CPU tensors, from now on in this process.

    Sets TRITON_INTERPRET=1 (so every kernel defined afterwards in this process is interpreted, yours too:
    that is Triton's rule, and the reason this is never done on import) and rebuilds triton's own library
    functions as interpretable ones if triton was imported first. Must come before softmax_core's kernels
    are defined; after that it raises InterpreterChosenTooLate. Calling it twice is harmless."""
    global INTERPRETED, KERNEL_DEVICE_TYPE
    if INTERPRETED:
        return
    if any(name in sys.modules for name in KERNEL_MODULES):
        raise InterpreterChosenTooLate(
            "softmax_core's kernels are already defined as compiled kernels; call "
            "softmax_core.runtime.use_interpreter() before the first softmax or plan, or start the process "
            "with TRITON_INTERPRET=1")
    os.environ[INTERPRET_ENV] = "1"
    _interpret_triton_library()
    INTERPRETED, KERNEL_DEVICE_TYPE = True, "cpu"


def use_interpreter_without_gpu() -> bool:
    """The explorer's and the tests' choice: the interpreter where torch sees no GPU, the GPU where it does.
    Returns whether the interpreter is on."""
    if not INTERPRETED and not gpu_present():
        use_interpreter()
    return INTERPRETED


def kernel_device():
    """The device our kernels read and write: the GPU, or the CPU under the interpreter."""
    import torch

    return torch.device("cpu") if INTERPRETED else torch.device("cuda", torch.cuda.current_device())


class Backend(Code):
    """What runs the kernels."""
    INTERPRETER = "interpreter"          # no GPU: Triton's interpreter on the CPU
    GPU = "gpu"                          # compiled by Triton for the GPU named by the figure `name`
    TORCH = "torch"                      # no GPU, interpreter not asked for: CPU tensors get torch's answer


def backend() -> Coded:
    """Which backend runs the kernels here, as a code and figures (softmax_core.words says it)."""
    if INTERPRETED:
        return Coded.of(Backend.INTERPRETER)
    if not gpu_present():
        return Coded.of(Backend.TORCH)
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
