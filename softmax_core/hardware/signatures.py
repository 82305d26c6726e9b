"""A kernel's compile signature, read from the jitted function's own parameter list.

Compiling ahead of a launch (compile.py) needs every parameter's Triton type. Rather than list them by
hand beside each kernel, they follow from the parameter names: `*_ptr` points to the matrix's elements
(unless `pointers` names another type), `*_stride` is a stride of the given integer type, anything else
not constexpr is an i32 count, and constexpr parameters take the given value or their default.
"""
from __future__ import annotations

import importlib
import inspect
from typing import Mapping


def _python_function(kernel: str):
    """The plain Python function behind "module:function", whether jitted or interpreted."""
    module, name = kernel.split(":")
    return getattr(importlib.import_module(module), name).fn


def _is_constexpr(param: inspect.Parameter) -> bool:
    annotation = param.annotation
    return "constexpr" in (annotation if isinstance(annotation, str) else getattr(annotation, "__name__", ""))


def kernel_signature(kernel: str, element_pointer: str, stride: str, constexprs: Mapping[str, object],
                     pointers: Mapping[str, str] | None = None) -> tuple[tuple, tuple]:
    """(signature, constexprs) for `kernel`, both in parameter order, as `CompileJob` takes them."""
    params = inspect.signature(_python_function(kernel)).parameters
    pointers = pointers or {}
    if unknown := (set(constexprs) | set(pointers)) - set(params):
        raise ValueError(f"{kernel} has no parameter(s) {sorted(unknown)}")
    signature, values = [], []
    for name, param in params.items():
        if _is_constexpr(param):
            if name not in constexprs and param.default is inspect.Parameter.empty:
                raise ValueError(f"{kernel} needs a value for its constexpr {name}")
            signature.append((name, "constexpr"))
            values.append((name, constexprs.get(name, param.default)))
        elif param.default is None and name not in pointers:
            # An optional buffer left out (the tiled kernel's trace_ptr): Triton specialises None as a constexpr.
            signature.append((name, "constexpr"))
            values.append((name, None))
        elif name in pointers:
            signature.append((name, pointers[name]))
        elif name.endswith("_ptr"):
            signature.append((name, element_pointer))
        elif name.endswith("_stride"):
            signature.append((name, stride))
        else:
            signature.append((name, "i32"))
    return tuple(signature), tuple(values)
