"""Which kernel each tuned path compiles, and the compile job of one launch of it: the signature and the
specialisation Triton's JIT will give it (which parameters it sees as multiples of 16, and so whether a row's
loads are 16-byte vectors; the split kernels' constexprs that shape a row), so that the registers a plan reads
are those of the kernel that runs. (plans/tuned.py re-exports these names.)"""
from __future__ import annotations

import torch

from softmax_core.hardware import dtypes
from softmax_core.hardware.compile import CompileJob, KernelResources, kernel_resources
from softmax_core.hardware.gpu import GpuSpec
from softmax_core.hardware.occupancy import Occupancy, occupancy
from softmax_core.kernels.any_width import vector_values
from softmax_core.hardware.signatures import kernel_signature

ROWS_KERNEL = {"forward": "softmax_core.kernels.tuned:softmax_rows_kernel",
               "backward": "softmax_core.kernels.tuned:softmax_backward_rows_kernel"}
TILED_KERNEL = {"forward": "softmax_core.kernels.tuned:softmax_tiled_kernel",
                "backward": "softmax_core.kernels.tuned:softmax_backward_tiled_kernel"}
SPLIT_KERNEL = {"forward": "softmax_core.kernels.shared_rows:softmax_split_kernel",
                "backward": "softmax_core.kernels.shared_rows:softmax_backward_split_kernel"}
# Shared tiled rows: the backward only (the forward's long 2-byte rows take the split path).
TILED_SPLIT_KERNEL = {"backward": "softmax_core.kernels.shared_rows:softmax_backward_tiled_split_kernel"}
# The any-width kernels (plans/any_width.py): an aligned body between masked edges, and tiny packed rows.
EDGE_KERNEL = {"forward": "softmax_core.kernels.any_width:softmax_any_width_kernel",
               "backward": "softmax_core.kernels.any_width:softmax_backward_any_width_kernel"}
TINY_KERNEL = "softmax_core.kernels.any_width:softmax_tiny_rows_kernel"
# Short rows of any width (plans/any_width.py): one lane a row forward, packed rows regrouped backward.
SHORT_ROWS_KERNEL = {"forward": "softmax_core.kernels.short_rows:softmax_lane_rows_kernel",
                     "backward": "softmax_core.kernels.short_rows:softmax_backward_short_rows_kernel"}
SHARED_ROW_KERNELS = (*SPLIT_KERNEL.values(), *TILED_SPLIT_KERNEL.values())   # they take a slots_ptr


def compile_job(kernel: str, dtype: torch.dtype, constexprs: dict, num_warps: int, gpu: GpuSpec, n_cols: int,
                aligned: bool, stride: str = "i32") -> CompileJob:
    # Strides as the JIT types them: i32 for any row stride below 2**31 elements (every row that fits in memory
    # with room to spare); kernels whose programs wait for each other also compile the i64 form (_co_resident).
    signature, values = kernel_signature(kernel, dtypes.of(dtype).triton_pointer, stride, constexprs,
                                         pointers={"slots_ptr": "*i64"} if kernel in SHARED_ROW_KERNELS else None)
    return CompileJob(kernel, signature, values, num_warps, 1, gpu.compile_target, on_device=gpu.live,
                      divisible=launch_divisible(signature, n_cols, aligned))


def compiled(kernel: str, dtype: torch.dtype, constexprs: dict, num_warps: int, gpu: GpuSpec, n_cols: int,
             aligned: bool, n_programs: int, stride: str = "i32") -> tuple[KernelResources, Occupancy]:
    """One launch of `kernel` judged for `gpu`: its registers and shared memory from the compile of the very
    specialisation that will run (compile_job), and the occupancy of a grid of `n_programs` of it."""
    res = kernel_resources(compile_job(kernel, dtype, constexprs, num_warps, gpu, n_cols, aligned, stride))
    return res, occupancy(gpu, res.n_regs, res.shared_bytes, num_warps, n_programs)


# The tensors a kernel reads (their alignment depends on the caller); what it writes, and the slots, are fresh
# allocations, so always aligned.
INPUT_POINTERS = {"forward": ("x_ptr",), "backward": ("y_ptr", "dy_ptr")}


def launch_divisible(signature: tuple, n_cols: int, aligned: bool) -> tuple[str, ...]:
    """The parameters Triton's JIT will specialise as multiples of 16 when it launches on rows of `n_cols`
    values stored contiguously (row stride = n_cols): every pointer, except the inputs when not `aligned`
    (PyTorch's allocations are aligned; a view that starts mid-allocation may not be), and the width and
    strides when n_cols is a multiple of 16. Compiling the same specialisation gives the registers of the
    kernel that will run."""
    names = [name for name, _ in signature]
    inputs = INPUT_POINTERS["forward" if "x_ptr" in names else "backward"]
    found = []
    for name, kind in signature:
        if kind.startswith("*") and (aligned or name not in inputs):
            found.append(name)
        elif n_cols % 16 == 0 and (name == "n_cols" or name.endswith("_stride")):
            found.append(name)
    return tuple(found)


def rows_provably_aligned(n_cols: int, aligned: bool) -> bool:
    """Whether Triton's JIT can prove every row's plain loads 16-byte vectors: the tensors start aligned and
    the width (so the row stride of contiguous rows) is a multiple of 16 (launch_divisible)."""
    return aligned and n_cols % 16 == 0


def split_shape(chunk: int, edges: bool, dtype) -> dict:
    """The split kernels' constexprs that shape a row: CHUNK, and with `edges` EDGES and VEC (values in 16
    bytes: the body's vectors and the edges' width). One owner for the planner's compile and the launch's
    (launch/launches.py), so that the kernel launched is the one whose registers the plan read. `dtype`: a
    torch dtype or its name."""
    if not edges:
        return {"CHUNK": chunk}
    return {"CHUNK": chunk, "EDGES": True, "VEC": vector_values(dtypes.element_size(dtype))}
