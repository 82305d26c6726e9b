"""softmax_core: the tutorial's fused softmax and the project's tuned one, their launch plans, and the facts around it.

No UI lives here: the Streamlit app renders what these functions compute.
"""
from . import runtime  # noqa: F401  first: chooses GPU or interpreter before any kernel is defined
from .gpu import GpuSpec, catalog_gpu, current_gpu, default_gpu, gpu_catalog
from .occupancy import Occupancy, occupancy
from .tutorial_plan import LaunchPlan, plan_launch
from .memory import MemoryStep, MemoryTraffic, bytes_moved, memory_traffic
from .launchers import (KernelDoesNotFit, naive_softmax, softmax, softmax_backward, softmax_forward,
                        tutorial_softmax)
from .tuned_plan import SoftmaxPlan, plan_softmax
from .reasons import PlanReason, ReasonCode

__all__ = [
    "GpuSpec", "catalog_gpu", "current_gpu", "default_gpu", "gpu_catalog",
    "LaunchPlan", "Occupancy", "occupancy", "plan_launch",
    "MemoryStep", "MemoryTraffic", "bytes_moved", "memory_traffic",
    "KernelDoesNotFit", "naive_softmax", "tutorial_softmax", "softmax", "softmax_forward", "softmax_backward",
    "SoftmaxPlan", "plan_softmax",
    "PlanReason", "ReasonCode",
]
