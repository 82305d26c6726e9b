"""Element types, in one table: each one's name, torch dtype, Triton type, size, and — for the floating types the
kernels take — its tolerances.

Everything that names, sizes or converts an element type asks here: the kernels' planner and checks, the
benchmark harness, and the kernel inspector (a pasted kernel's `x_ptr=*fp16` is read through `by_triton`).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class DType:
    name: str                       # "float32": torch's own name; what pages, CSV files and the command line call it
    torch: torch.dtype
    triton: str                     # Triton's scalar type in a signature: "fp32" (a pointer to it is "*fp32")
    softmax: bool = False           # the tuned kernels take it
    tutorial: bool = False          # the tutorial kernel takes it (and so its trace, the benchmark, the CLI)
    tolerance: float | None = None  # largest max |error| / max |reference| accepted against a float64-exact
                                    # answer: the benchmark's check and the inspector's reference check
    atol: float | None = None       # how close the kernels' output is to an exact softmax at this precision
    rtol: float | None = None       # (torch.testing.assert_close's atol / rtol; the tests hold them to it)

    @property
    def size(self) -> int:
        """Bytes per element."""
        return self.torch.itemsize

    @property
    def triton_pointer(self) -> str:
        """The Triton signature type of a pointer to it ("*fp32")."""
        return "*" + self.triton


def _optional(name: str) -> torch.dtype | None:
    return getattr(torch, name, None)       # the unsigned and fp8 types exist from torch 2.1-2.3 on


# Output is rounded to the input's dtype, so the tolerances follow its precision (bf16 keeps 8 bits of
# mantissa); arithmetic inside is float32 (float64 for float64).
ELEMENT_TYPES: tuple[DType, ...] = tuple(d for d in (
    DType("float32", torch.float32, "fp32", softmax=True, tutorial=True, tolerance=1e-4, atol=1e-5, rtol=1e-5),
    DType("float16", torch.float16, "fp16", softmax=True, tutorial=True, tolerance=5e-3, atol=1e-3, rtol=1e-3),
    DType("bfloat16", torch.bfloat16, "bf16", softmax=True, tutorial=True, tolerance=3e-2, atol=8e-3, rtol=1e-2),
    DType("float64", torch.float64, "fp64", softmax=True, tolerance=1e-10, atol=1e-12, rtol=1e-12),
    DType("float8_e4m3fn", _optional("float8_e4m3fn"), "fp8e4nv"),
    DType("float8_e5m2", _optional("float8_e5m2"), "fp8e5"),
    DType("bool", torch.bool, "i1"),
    DType("int8", torch.int8, "i8"), DType("int16", torch.int16, "i16"),
    DType("int32", torch.int32, "i32"), DType("int64", torch.int64, "i64"),
    DType("uint8", torch.uint8, "u8"), DType("uint16", _optional("uint16"), "u16"),
    DType("uint32", _optional("uint32"), "u32"), DType("uint64", _optional("uint64"), "u64"),
) if d.torch is not None)

# The element types softmax computes in, by name (the tuned kernels; the tutorial's are TUTORIAL_DTYPES).
DTYPES: dict[str, DType] = {d.name: d for d in ELEMENT_TYPES if d.softmax}
TUTORIAL_DTYPES: tuple[str, ...] = tuple(d.name for d in ELEMENT_TYPES if d.tutorial)
TUNED_DTYPES: tuple[str, ...] = tuple(DTYPES)
TRITON_TYPES: tuple[str, ...] = tuple(d.triton for d in ELEMENT_TYPES)
_BY_TORCH = {d.torch: d for d in ELEMENT_TYPES}
_BY_NAME = {d.name: d for d in ELEMENT_TYPES}
_BY_TRITON = {d.triton: d for d in ELEMENT_TYPES}
# The 2-byte floats: what the kernels may read in half precision and write as float32 in the same pass.
HALF_PRECISION: tuple[torch.dtype, ...] = tuple(d.torch for d in DTYPES.values() if d.size == 2)


def of(dtype: torch.dtype | str, allowed: tuple[str, ...] = TUNED_DTYPES) -> DType:
    """The facts of `dtype` (a torch dtype or its name); TypeError names the choices if it is not allowed."""
    d = _BY_NAME.get(dtype) if isinstance(dtype, str) else _BY_TORCH.get(dtype)
    if d is None or d.name not in allowed:
        raise TypeError(f"dtype must be one of {', '.join(allowed)}, got {name_of_any(dtype)}")
    return d


def by_triton(triton_type: str) -> DType | None:
    """The element type Triton calls `triton_type` ("fp16", "i32"), or None for one it does not name."""
    return _BY_TRITON.get(triton_type)


def name_of_any(dtype: object) -> str:
    """A dtype's name ("float32" for torch.float32), for messages about any dtype, in the table or not."""
    known = _BY_TORCH.get(dtype) if isinstance(dtype, torch.dtype) else None
    if known is not None:
        return known.name
    return repr(dtype).removeprefix("torch.") if isinstance(dtype, torch.dtype) else str(dtype)


def name(dtype: torch.dtype | str) -> str:
    return of(dtype).name


def element_size(dtype: torch.dtype | str) -> int:
    return of(dtype).size


def torch_dtype(dtype: torch.dtype | str) -> torch.dtype:
    return of(dtype).torch
