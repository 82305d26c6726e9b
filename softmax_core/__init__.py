"""softmax_core: the tutorial's fused softmax and the project's tuned one, their launch plans, and the facts around it.

The drop-in a model author imports: `import softmax_core as sc; sc.softmax(x)`. No UI lives here, and importing
it changes nothing: no environment variable is set, nothing of triton is rebound, and no kernel is defined
until a name that needs one is first used (each public name below is loaded on first use). Kernels run on
CUDA tensors; a CPU tensor gets torch's answer unless Triton's interpreter was asked for
(`sc.runtime.use_interpreter()`, or TRITON_INTERPRET=1 in the environment).
"""
from __future__ import annotations

import importlib

# The package's version, in this one place: pyproject.toml reads it from here when the package is built.
__version__ = "0.1.0"

from softmax_core.hardware import runtime  # noqa: E402,F401  reads the environment, sets nothing

# Each public name and the module that defines it, loaded on first use (PEP 562).
_PUBLIC = {
    "GpuSpec": "softmax_core.hardware.gpu", "catalog_gpu": "softmax_core.hardware.gpu",
    "current_gpu": "softmax_core.hardware.gpu", "default_gpu": "softmax_core.hardware.gpu",
    "gpu_catalog": "softmax_core.hardware.gpu",
    "Occupancy": "softmax_core.hardware.occupancy", "occupancy": "softmax_core.hardware.occupancy",
    "LaunchPlan": "softmax_core.plans.tutorial", "plan_launch": "softmax_core.plans.tutorial",
    "MemoryStep": "softmax_core.traffic", "MemoryTraffic": "softmax_core.traffic",
    "bytes_moved": "softmax_core.traffic", "memory_traffic": "softmax_core.traffic",
    "KernelDoesNotFit": "softmax_core.launch.api", "naive_softmax": "softmax_core.launch.api",
    "softmax": "softmax_core.launch.api", "softmax_backward": "softmax_core.launch.api",
    "softmax_forward": "softmax_core.launch.api", "tutorial_softmax": "softmax_core.launch.api",
    "SoftmaxPlan": "softmax_core.plans.tuned", "plan_softmax": "softmax_core.plans.choose",
    "PlanReason": "softmax_core.plans.reasons", "ReasonCode": "softmax_core.plans.reasons",
}

__all__ = ["__version__", "runtime", *_PUBLIC]


def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'softmax_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value          # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))
