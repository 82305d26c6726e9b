"""softmax_core: the tutorial's fused softmax and the project's tuned one, their launch plans, and the facts around it.

No UI lives here: the Streamlit app renders what these functions compute.
"""
# The package's version, in this one place: pyproject.toml reads it from here when the package is built.
__version__ = "0.1.0"

from softmax_core.hardware import runtime  # noqa: F401  first: chooses GPU or interpreter before any kernel is defined
from softmax_core.hardware.gpu import GpuSpec, catalog_gpu, current_gpu, default_gpu, gpu_catalog
from softmax_core.hardware.occupancy import Occupancy, occupancy
from softmax_core.plans.tutorial import LaunchPlan, plan_launch
from softmax_core.teaching.memory import MemoryStep, MemoryTraffic, bytes_moved, memory_traffic
from softmax_core.launch.api import (KernelDoesNotFit, naive_softmax, softmax, softmax_backward, softmax_forward,
                        tutorial_softmax)
from softmax_core.plans.tuned import SoftmaxPlan
from softmax_core.plans.choose import plan_softmax
from softmax_core.plans.reasons import PlanReason, ReasonCode

__all__ = [
    "__version__",
    "GpuSpec", "catalog_gpu", "current_gpu", "default_gpu", "gpu_catalog",
    "LaunchPlan", "Occupancy", "occupancy", "plan_launch",
    "MemoryStep", "MemoryTraffic", "bytes_moved", "memory_traffic",
    "KernelDoesNotFit", "naive_softmax", "tutorial_softmax", "softmax", "softmax_forward", "softmax_backward",
    "SoftmaxPlan", "plan_softmax",
    "PlanReason", "ReasonCode",
]
