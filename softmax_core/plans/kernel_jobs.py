"""The compile job of one launch of a plan, and its judgement for a GPU: the signature and the specialisation
Triton's JIT will give the plan's kernel (which parameters it sees as multiples of 16, and so whether a row's
loads are 16-byte vectors), so that the registers a plan reads are those of the kernel that runs; for the row
plans (plans/tuned.py re-exports these names) and the strided ones (`launch_resources`)."""
from __future__ import annotations

import torch

from softmax_core.hardware import dtypes
from softmax_core.hardware.compile import CompileJob, KernelResources, kernel_resources
from softmax_core.hardware.gpu import GpuSpec
from softmax_core.hardware.occupancy import Occupancy, occupancy
from softmax_core.hardware.signatures import kernel_signature
from softmax_core.plans.plan import (EDGE_KERNEL, ROWS_KERNEL, SHARED_ROW_KERNELS, SHORT_ROWS_KERNEL,  # noqa: F401
                                     SPLIT_KERNEL, TILED_KERNEL, TILED_SPLIT_KERNEL, TINY_KERNEL, SoftmaxPlan)
from softmax_core.plans.strided import AnyDimPlan, ReductionLayout


def compile_job(kernel: str, dtype: torch.dtype, constexprs: dict, num_warps: int, gpu: GpuSpec, n_cols: int,
                aligned: bool, stride: str = "i32") -> CompileJob:
    # Strides as the JIT types them: i32 for any row stride below 2**31 elements (every row that fits in memory
    # with room to spare); kernels whose programs wait for each other also compile the i64 form (_co_resident).
    signature, values = kernel_signature(kernel, dtypes.of(dtype).triton_pointer, stride, constexprs,
                                         pointers={"slots_ptr": "*i64"} if kernel in SHARED_ROW_KERNELS else None)
    return CompileJob(kernel, signature, values, num_warps, 1, gpu.compile_target, on_device=gpu.live,
                      divisible=launch_divisible(signature, n_cols, aligned))


def judged(plan: SoftmaxPlan, n_programs: int | None = None,
           stride: str = "i32") -> tuple[KernelResources, Occupancy]:
    """One launch of `plan` judged for its GPU: the registers and shared memory of the compile of the very
    kernel and constexprs it launches (plan.kernel, plan.constexprs) in the specialisation the JIT will give it,
    and the occupancy of its grid (or of `n_programs` programs)."""
    job = compile_job(plan.kernel, plan.dtype, dict(plan.constexprs), plan.num_warps, plan.gpu, plan.n_cols,
                      plan.aligned, stride)
    res = kernel_resources(job)
    programs = plan.num_programs if n_programs is None else n_programs
    return res, occupancy(plan.gpu, res.n_regs, res.shared_bytes, plan.num_warps, programs)


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


# The any-dim kernels' index space, in the order they take each tensor's strides.
AXES = ("outer", "outer2", "reduce", "inner")


def any_dim_compile_job(layout: ReductionLayout, written: ReductionLayout, dtype_name: str, gpu: GpuSpec,
                        direction: str, constexprs, num_warps: int, kernel: str, pointers: dict | None = None):
    """The compile job of one any-dim launch, specialised as Triton's JIT will launch it on a fresh contiguous
    output and an aligned input: pointers 16-byte aligned, integer arguments equal to 1 constants, the others
    that are multiples of 16 marked so (the unit stride is what makes the loads vectors)."""
    signature, values = kernel_signature(kernel, dtypes.of(dtype_name).triton_pointer, "i32", dict(constexprs),
                                         pointers)
    sides = ("x", "y") if direction == "forward" else ("y", "dy")
    ints = dict(zip([f"{sides[0]}_{a}" for a in AXES], layout.strides))
    ints.update(zip([f"{sides[1]}_{a}" for a in AXES], written.strides))
    ints.update(n_outer=layout.n_outer, n_outer2=layout.n_outer2, n_reduce=layout.n_reduce, n_inner=layout.n_inner)
    sig, consts, divisible = [], dict(values), []
    for name, kind in signature:
        value = ints.get(name)
        if kind == "i32" and value == 1:
            sig.append((name, "constexpr"))
            consts[name] = 1
            continue
        sig.append((name, kind))
        if kind.startswith("*") or (value is not None and value % 16 == 0):
            divisible.append(name)
    order = [name for name, _ in sig]
    return CompileJob(kernel, tuple(sig), tuple(sorted(consts.items(), key=lambda kv: order.index(kv[0]))),
                      num_warps, 1, gpu.compile_target, on_device=gpu.live, divisible=tuple(divisible))


def launch_resources(plan: AnyDimPlan, written: ReductionLayout | None = None, constexprs=None):
    """The registers, spills and shared memory of one launch of `plan` (its own constexprs, or `constexprs`: one of
    `plan.launches`), compiled for its GPU as the JIT will specialise it; `written`: the other tensor's layout."""
    pointers = {"slots_ptr": "*i64"} if plan.n_slots else None
    return kernel_resources(any_dim_compile_job(plan.layout, written or plan.layout, plan.dtype, plan.gpu,
                                                plan.direction, constexprs or plan.constexprs, plan.num_warps,
                                                plan.kernel, pointers))
