"""The element types the kernels take: each one's name, torch dtype, Triton pointer type, size and tolerance.

Everything else asks here (`of`, `name`, `element_size`) instead of writing its own table.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class DType:
    name: str                       # "float32": what pages, CSV files and the command line call it
    torch: torch.dtype
    triton_pointer: str             # the Triton signature type of a pointer to it ("*fp32")
    tolerance: float | None         # benchmark check: largest max |error| / max |reference| against torch in
                                    # float32; None: not benchmarked (the tutorial kernel does not take it)
    atol: float                     # how close the kernels' output is to an exact softmax at this precision
    rtol: float                     # (torch.testing.assert_close's atol / rtol; the tests hold them to it)

    @property
    def size(self) -> int:
        """Bytes per element."""
        return self.torch.itemsize


# Output is rounded to the input's dtype, so the tolerances follow its precision (bf16 keeps 8 bits of
# mantissa); arithmetic inside is float32 (float64 for float64).
DTYPES: dict[str, DType] = {d.name: d for d in (
    DType("float32", torch.float32, "*fp32", 1e-4, atol=1e-5, rtol=1e-5),
    DType("float16", torch.float16, "*fp16", 5e-3, atol=1e-3, rtol=1e-3),
    DType("bfloat16", torch.bfloat16, "*bf16", 3e-2, atol=8e-3, rtol=1e-2),
    DType("float64", torch.float64, "*fp64", None, atol=1e-12, rtol=1e-12),
)}
# What the tutorial kernel (and so its trace, the benchmark and the command line) takes; the tuned
# kernels also take float64.
TUTORIAL_DTYPES: tuple[str, ...] = tuple(name for name, d in DTYPES.items() if d.tolerance is not None)
TUNED_DTYPES: tuple[str, ...] = tuple(DTYPES)
_BY_TORCH = {d.torch: d for d in DTYPES.values()}
# The 2-byte floats: what the kernels may read in half precision and write as float32 in the same pass.
HALF_PRECISION: tuple[torch.dtype, ...] = tuple(d.torch for d in DTYPES.values() if d.size == 2)


def of(dtype: torch.dtype | str, allowed: tuple[str, ...] = TUNED_DTYPES) -> DType:
    """The facts of `dtype` (a torch dtype or its name); TypeError names the choices if it is not allowed."""
    d = DTYPES.get(dtype) if isinstance(dtype, str) else _BY_TORCH.get(dtype)
    if d is None or d.name not in allowed:
        raise TypeError(f"dtype must be one of {', '.join(allowed)}, got {name_of_any(dtype)}")
    return d


def name_of_any(dtype: object) -> str:
    """A dtype's short name ("float32" for torch.float32), for messages about any dtype, supported or not."""
    return str(dtype).removeprefix("torch.")


def name(dtype: torch.dtype | str) -> str:
    return of(dtype).name


def element_size(dtype: torch.dtype | str) -> int:
    return of(dtype).size


def torch_dtype(dtype: torch.dtype | str) -> torch.dtype:
    return of(dtype).torch
