"""The answers a correct softmax is held to."""
import torch

from softmax_core.hardware import dtypes

# The output is rounded to the input's dtype, so compare at that dtype's precision (softmax_core.hardware.dtypes).
TOLERANCE = {d.torch: dict(atol=d.atol, rtol=d.rtol) for d in dtypes.DTYPES.values()}


def reference_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """float64 softmax rounded to x's dtype: the answer a perfect kernel would give."""
    return torch.softmax(x.double(), dim=dim).to(x.dtype)


def assert_like_torch(y: torch.Tensor, x: torch.Tensor, dim: int = -1, label: str = "") -> None:
    """Same NaN pattern as torch, values within the dtype's tolerance of a float64 reference. `label` names
    the case in the failure."""
    expected = reference_softmax(x, dim)
    assert torch.equal(y.isnan(), expected.isnan()), f"NaN pattern differs from torch {label}".rstrip()
    torch.testing.assert_close(y.nan_to_num(), expected.nan_to_num(), **TOLERANCE[x.dtype],
                               msg=(lambda found: f"{found}\n{label}") if label else None)
