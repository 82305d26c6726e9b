"""Which elements a program's loads touch, recorded from the real kernel running in Triton's interpreter.

A layout case (shape, dtype, dim, view, direction) becomes a real tensor, and `sc.softmax` runs on it as a
user's call would; the interpreter's builder is watched meanwhile. Its launch (kernel, grid, arguments,
constexprs, num_warps) is kept, so that the same specialisation can be compiled for a GPU, and every
`tl.load` the chosen program executes is kept as the array of offsets it computed (elements from the start
of the tensor's storage) with its mask and the kernel source line it came from. The run stops once those
loads are recorded: a big tensor is allocated (never filled: its pages are touched only where the program
reads) and sampled, never walked whole. The backward is recorded by running `y.backward(dy)`, with the
forward's own launch skipped (its values do not change where the backward reads).

The case and its tensor are layout_case's (whose `planner_view` is the one place this package reads the
planner).
(softmax_teaching.recorded_loads keeps records on disk and makes them for any GPU, on any server.)
"""
from __future__ import annotations

import inspect
import sys
import threading
from dataclasses import dataclass

import numpy as np
import torch

from softmax_core.hardware import runtime
from softmax_core.hardware.compile import CompileJob
from softmax_core.hardware.gpu import default_gpu
from softmax_teaching.layout_case import Case, make_input, planner_view  # noqa: F401  (Case: the callers name it here too)

MAX_LOADS = 8              # loads recorded per program (a persistent or chunked program repeats its loads)
KERNELS = ("planned", "row_walk")

# ------------------------------------------------------------------------------------------------ recording

@dataclass(frozen=True)
class TensorArg:
    name: str                  # the kernel's parameter
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    storage_offset: int
    element_bytes: int
    pointer: str               # its Triton type ("*fp32")


@dataclass(frozen=True)
class RecordedLoad:
    """One tl.load of a program. What it moves per tile element is an item: one of the tensor's values, or a
    word of `values_per_item` neighbouring values (a kernel that reads 2-byte values as int32 or int64 words,
    kernels/words.py). Requests are counted in items, the elements the compiled load's lanes hold."""
    line: int                  # the kernel source line of the tl.load
    tensor: str                # the parameter whose storage it reads
    element_bytes: int         # bytes of one item
    offsets: np.ndarray        # items from the start of that tensor's storage, the tile's shape
    mask: np.ndarray
    caller: tuple[int, ...] = ()   # the kernel's line that called the helper holding the load, if any
    values_per_item: int = 1

    @property
    def tile_shape(self) -> tuple[int, ...]:
        return tuple(self.offsets.shape)

    @property
    def value_offsets(self) -> np.ndarray:
        """The tensor's values the load reads, in values from the start of the storage: the tile's shape, with a
        trailing axis of `values_per_item` (each item's values, lowest address first)."""
        k = self.values_per_item
        return self.offsets[..., None] * k + np.arange(k)

    @property
    def value_mask(self) -> np.ndarray:
        return np.broadcast_to(self.mask[..., None], self.mask.shape + (self.values_per_item,))


@dataclass(frozen=True)
class RecordedLaunch:
    kernel: str                # "module:function"
    source_file: str           # the kernel's file (its loads' lines are in it)
    grid: tuple[int, ...]
    program: int | None        # the program recorded (None: every program)
    num_warps: int
    num_stages: int
    arguments: tuple           # ((name, value), ...): ints and bools as launched, tensors by TensorArg
    loads: tuple[RecordedLoad, ...]
    complete: bool             # every load of the recorded program(s) is here

    def tensor(self, name: str) -> TensorArg:
        return dict(self.arguments)[name]

    def compile_job(self, target: tuple) -> CompileJob:
        """The launch as Triton's JIT specialises it, compiled for `target`: pointers to the element type,
        ints of value 1 as constexprs, multiples of 16 (and 16-byte aligned pointers) marked divisible."""
        signature, constexprs, divisible = [], [], []
        for name, value in self.arguments:
            if isinstance(value, TensorArg):
                signature.append((name, value.pointer))
                if (value.storage_offset * value.element_bytes) % 16 == 0:
                    divisible.append(name)
            elif isinstance(value, ConstArg):
                signature.append((name, "constexpr"))
                constexprs.append((name, value.value))
            elif isinstance(value, bool):
                signature.append((name, "i1"))
            elif value is None:
                signature.append((name, "constexpr"))
                constexprs.append((name, None))
            elif value == 1:
                signature.append((name, "constexpr"))
                constexprs.append((name, 1))
            else:
                signature.append((name, "i32" if -2**31 <= value < 2**31 else "i64"))
                if value % 16 == 0:
                    divisible.append(name)
        return CompileJob(self.kernel, tuple(signature), tuple(constexprs), self.num_warps, self.num_stages,
                          tuple(target), divisible=tuple(divisible))


@dataclass(frozen=True)
class ConstArg:
    value: object


_TYPE_OF = {torch.float32: "*fp32", torch.float16: "*fp16", torch.bfloat16: "*bf16", torch.float64: "*fp64",
            torch.int64: "*i64", torch.int32: "*i32", torch.int16: "*i16", torch.int8: "*i8", torch.uint8: "*u8",
            torch.bool: "*i1"}


class _Enough(Exception):
    """Raised inside the interpreted kernel once the loads wanted are recorded."""


_RECORDING = threading.Lock()


class _Recorder:
    def __init__(self, program: int | None, max_loads: int | None):
        self.thread = threading.get_ident()
        self.program, self.max_loads = program, max_loads
        self.active = True
        self.launch = None
        self.loads: list[RecordedLoad] = []
        self.enough = False
        self.bases: list[tuple[int, int, str, int]] = []      # (start, end, parameter, element bytes)

    def mine(self) -> bool:
        return threading.get_ident() == self.thread


def _kernel_lines(source_file: str) -> tuple[int, ...]:
    """The lines of the kernel's file on the interpreter's stack, innermost first: the tl.load's own line,
    then the lines that called the @triton.jit helper holding it."""
    frame, lines = sys._getframe(2), []
    while frame is not None:
        if frame.f_code.co_filename == source_file:
            lines.append(frame.f_lineno)
        frame = frame.f_back
    return tuple(lines)


def record(case: Case, kernel: str = "planned", program: int | None = 0, max_loads: int | None = MAX_LOADS,
           x: torch.Tensor | None = None) -> RecordedLaunch:
    """Run the case's softmax in the interpreter (this process must be interpreting) and record the first
    launch of the case's direction: every load of `program` (None: of every program, for small tensors), at
    most `max_loads` of them (None: all). `kernel` "row_walk" runs softmax_teaching.row_walk instead of the
    planner's kernel. `x` overrides the case's tensor (same shape and dtype)."""
    if not runtime.INTERPRETED:
        raise RuntimeError("recording loads needs Triton's interpreter (runtime.use_interpreter())")
    import triton.runtime.interpreter as interp

    if x is None:
        x = make_input(case)
    recorder = _Recorder(program, max_loads)
    builder = interp.interpreter_builder
    original_call = interp.GridExecutor.__call__
    original_load = builder.create_masked_load
    original_grid = builder.set_grid_idx

    def call(executor, *args, **kwargs):
        if not recorder.mine() or recorder.launch is not None:
            return original_call(executor, *args, **kwargs)
        if not recorder.active:
            return None                                   # the forward of a backward case: not needed
        recorder.launch = _launch_of(executor, args, kwargs)
        recorder.bases = _storages(executor, args, kwargs)
        return original_call(executor, *args, **kwargs)

    def set_grid_idx(gx, gy, gz):
        if recorder.mine() and recorder.launch is not None and recorder.program is not None \
                and gx > recorder.program:
            recorder.enough = True
            raise _Enough
        return original_grid(gx, gy, gz)

    def masked_load(ptrs, mask, other, cache_policy, is_volatile):
        if recorder.mine() and recorder.launch is not None and not recorder.enough and (
                recorder.program is None or builder.grid_idx[0] == recorder.program):
            recorder.loads.append(_load_of(recorder, ptrs.data, mask.data, _item_bytes(ptrs)))
            if recorder.max_loads is not None and len(recorder.loads) >= recorder.max_loads:
                recorder.enough = True
                raise _Enough
        return original_load(ptrs, mask, other, cache_policy, is_volatile)

    with _RECORDING:
        interp.GridExecutor.__call__ = call
        builder.set_grid_idx = set_grid_idx
        builder.create_masked_load = masked_load
        try:
            with np.errstate(all="ignore"):              # the storage is not filled: its values are whatever
                _run(case, kernel, x, recorder)
        except Exception:
            if not recorder.enough:
                raise
        finally:
            interp.GridExecutor.__call__ = original_call
            del builder.set_grid_idx
            del builder.create_masked_load
    if recorder.launch is None:
        raise RuntimeError(f"no kernel was launched for {case}")
    kernel_ref, source, grid, warps, stages, arguments = recorder.launch
    return RecordedLaunch(kernel_ref, source, grid, program, warps, stages, arguments, tuple(recorder.loads),
                          complete=not (recorder.enough and recorder.max_loads is not None
                                        and len(recorder.loads) >= recorder.max_loads))


def _run(case: Case, kernel: str, x: torch.Tensor, recorder: _Recorder) -> None:
    import softmax_core as sc

    if kernel == "row_walk":
        from softmax_teaching.row_walk import launch_row_walk

        view = planner_view(case.shape, tuple(x.stride()), case.dim, case.dtype, default_gpu(), "forward")
        y = torch.empty_like(x.as_strided((x.untyped_storage().nbytes() // x.element_size(),), (1,), 0))
        launch_row_walk(x, y.as_strided(x.shape, x.stride(), x.storage_offset()), view.fold)
        return
    if case.direction == "forward":
        sc.softmax(x, case.dim)
        return
    recorder.active = False
    leaf = x.detach().requires_grad_()
    y = sc.softmax(leaf, case.dim)
    recorder.active = True
    dy = torch.empty_like(y)
    y.backward(dy)


def _launch_of(executor, args, kwargs):
    fn = executor.fn
    params = list(inspect.signature(fn).parameters.values())
    bound = dict(zip([p.name for p in params], args))
    bound.update({k: v for k, v in kwargs.items() if k in {p.name for p in params}})
    arguments = []
    for p in params:
        value = bound.get(p.name, p.default)
        annotation = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", "")
        if hasattr(value, "data_ptr"):
            arguments.append((p.name, _tensor_arg(p.name, value)))
        elif "constexpr" in str(annotation):
            arguments.append((p.name, ConstArg(value)))
        else:
            arguments.append((p.name, value))
    grid = executor.grid if not callable(executor.grid) else executor.grid(bound)
    ref = f"{fn.__module__}:{fn.__name__}"
    return (ref, fn.__code__.co_filename, tuple(grid), int(kwargs.get("num_warps", 4)),
            int(kwargs.get("num_stages", 3)), tuple(arguments))


def _tensor_arg(name: str, t: torch.Tensor) -> TensorArg:
    return TensorArg(name, tuple(t.shape), tuple(t.stride()), int(t.storage_offset()), t.element_size(),
                     _TYPE_OF[t.dtype])


def _storages(executor, args, kwargs):
    params = [p.name for p in inspect.signature(executor.fn).parameters.values()]
    bound = dict(zip(params, args))
    bound.update(kwargs)
    found = []
    for name, value in bound.items():
        if hasattr(value, "data_ptr"):
            storage = value.untyped_storage()
            found.append((storage.data_ptr(), storage.data_ptr() + storage.nbytes(), name, value.element_size()))
    return found


def _item_bytes(ptrs) -> int | None:
    """Bytes of what one pointer of a load points at (None where the interpreter does not say)."""
    try:
        return max(1, ptrs.get_element_ty().primitive_bitwidth // 8)
    except AttributeError:
        return None


def _load_of(recorder: _Recorder, addresses: np.ndarray, mask: np.ndarray, item_bytes: int | None) -> RecordedLoad:
    addresses = np.asarray(addresses).astype(np.int64)
    mask = np.broadcast_to(np.asarray(mask, dtype=bool), addresses.shape).copy()
    lines = _kernel_lines(recorder.launch[1])
    probe = int(addresses[mask].min()) if mask.any() else int(addresses.reshape(-1)[0])
    for start, end, name, elt in recorder.bases:
        if start <= probe < end:
            # a pointer cast to a wider integer reads words of several values (item_bytes a multiple of elt)
            item = item_bytes if item_bytes and item_bytes > elt and item_bytes % elt == 0 else elt
            return RecordedLoad(lines[0] if lines else 0, name, item, (addresses - start) // item, mask, lines[1:2],
                                item // elt)
    raise RuntimeError("a load outside every tensor argument")

