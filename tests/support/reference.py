"""The answers a correct softmax is held to."""
import torch

from softmax_core.hardware import dtypes

# The output is rounded to the input's dtype, so compare at that dtype's precision (softmax_core.hardware.dtypes).
TOLERANCE = {d.torch: dict(atol=d.atol, rtol=d.rtol) for d in dtypes.DTYPES.values()}




def reference_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """float64 softmax rounded to x's dtype: the answer a perfect kernel would give."""
    return torch.softmax(x.double(), dim=dim).to(x.dtype)
