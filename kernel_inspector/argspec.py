"""A kernel's arguments stated as text, the way Triton's compiler wants them.

    x_ptr=*fp32        a pointer to fp32 elements
    n=i32              an integer scalar (n=i32:4096 also gives the value a measurement runs with)
    eps=fp32:1e-5      a float scalar with its value
    BLOCK=1024         a constexpr (also True/False, 1e-5, tl.float16)

`prefill` reads what the kernel's own annotations and defaults say (constexprs, their defaults, names
ending in `ptr` as pointers, float defaults as fp32), and `merge` lays the user's specs over that.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from kernel_inspector.gate import KernelInfo
from softmax_core.hardware import dtypes
from kernel_inspector.rules import ConfigSpec, Symbol

# The element types an argument may name, in Triton's words, and their sizes: the library's one table.
SCALAR_TYPES = dtypes.TRITON_TYPES
ELEMENT_BYTES = {t: dtypes.by_triton(t).size for t in SCALAR_TYPES}
# Pointers to these get random tensors of their own type in a run (interpret.py, measure.py); any other (bool,
# fp8, the wide unsigned types, which torch cannot fill at random on every device) gets float32 as a stand-in.
FILLED_TYPES = ("fp16", "bf16", "fp32", "fp64", "i8", "i16", "i32", "i64", "u8")


def element_torch_dtype(triton_type: str):
    """The torch dtype of the random tensor a pointer to `triton_type` gets in a run."""
    element = dtypes.by_triton(triton_type) if triton_type in FILLED_TYPES else None
    return element.torch if element is not None else dtypes.torch_dtype("float32")
KINDS = ("pointer", "scalar", "constexpr")
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
SYMBOL = re.compile(r"^(tl|triton\.language)\.([a-z0-9_]+)$")
ARG_ERROR_CODES = ("no_equals", "bad_name", "unknown_type", "bad_value", "unknown_argument", "missing_value")


class ArgSpecError(ValueError):
    def __init__(self, code: str, text: str):
        super().__init__(f"{code}: {text}")
        self.code, self.text = code, text


@dataclass(frozen=True)
class ArgSpec:
    name: str
    kind: str                        # one of KINDS
    dtype: str | None = None         # element type of a pointer, type of a scalar (SCALAR_TYPES)
    value: object = None             # a scalar's run value or a constexpr's value (None: not given)
    tuned: bool = False              # a constexpr the autotune configs set
    needs_value: bool = False        # a constexpr with no default that no spec has given a value yet

    @property
    def triton_type(self) -> str:
        return {"pointer": f"*{self.dtype}", "scalar": str(self.dtype), "constexpr": "constexpr"}[self.kind]

    def text(self) -> str:
        """The spec written back as parse_arg reads it."""
        if self.kind == "pointer":
            return f"{self.name}=*{self.dtype}"
        if self.kind == "scalar":
            return f"{self.name}={self.dtype}" + ("" if self.value is None else f":{self.value}")
        return f"{self.name}={value_text(self.value)}"


def value_text(value: object) -> str:
    if isinstance(value, Symbol):
        return "tl." + value.path.rsplit(".", 1)[-1]
    return repr(value) if isinstance(value, str) else str(value)


def parse_value(text: str) -> object:
    """A constexpr or scalar value: int, float, bool, None, or a triton.language member (tl.float16)."""
    text = text.strip()
    if text in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[text]
    if found := SYMBOL.match(text):
        return Symbol(f"triton.language.{found.group(2)}")
    try:
        return int(text, 0) if re.fullmatch(r"[+-]?(0[xob])?[0-9a-fA-F_]+", text) else float(text)
    except ValueError:
        raise ArgSpecError("bad_value", text) from None


def parse_arg(text: str) -> ArgSpec:
    if "=" not in text:
        raise ArgSpecError("no_equals", text)
    name, _, rhs = (part.strip() for part in text.partition("="))
    if not NAME.match(name):
        raise ArgSpecError("bad_name", name)
    if rhs.startswith("*"):
        dtype = rhs[1:].strip()
        if dtype not in SCALAR_TYPES:
            raise ArgSpecError("unknown_type", rhs)
        return ArgSpec(name, "pointer", dtype)
    dtype, _, value = rhs.partition(":")
    if dtype in SCALAR_TYPES:
        return ArgSpec(name, "scalar", dtype, parse_value(value) if value.strip() else None)
    if _:
        raise ArgSpecError("unknown_type", dtype)
    return ArgSpec(name, "constexpr", value=parse_value(rhs))


def prefill(kernel: KernelInfo) -> tuple[ArgSpec, ...]:
    """What the kernel itself says about each argument."""
    tuned = {name for config in kernel.configs for name, _ in config.constexprs}
    specs = []
    for param in kernel.params:
        if param.name in tuned:
            specs.append(ArgSpec(param.name, "constexpr", tuned=True))
        elif param.constexpr or (param.has_default and param.default is None):
            specs.append(ArgSpec(param.name, "constexpr", value=param.default, needs_value=not param.has_default))
        elif param.annotation and param.annotation.strip("'\"").startswith("*"):
            specs.append(parse_arg(f"{param.name}={param.annotation.strip(chr(39) + chr(34))}"))
        elif param.name.lower().endswith("ptr") or param.name.lower().startswith("ptr"):
            specs.append(ArgSpec(param.name, "pointer", "fp32"))
        elif isinstance(param.default, float) or param.name.lower() in ("eps", "epsilon", "scale", "alpha", "beta"):
            specs.append(ArgSpec(param.name, "scalar", "fp32", param.default))
        else:
            specs.append(ArgSpec(param.name, "scalar", "i32", param.default if isinstance(param.default, int) else None))
    return tuple(specs)


def merge(prefilled: tuple[ArgSpec, ...], given: list[ArgSpec]) -> tuple[ArgSpec, ...]:
    """The user's specs laid over the prefilled ones, in the kernel's parameter order."""
    names = {spec.name for spec in prefilled}
    if unknown := [g.name for g in given if g.name not in names]:
        raise ArgSpecError("unknown_argument", unknown[0])
    by_name = {g.name: g for g in given}
    return tuple(replace(by_name[s.name], tuned=s.tuned) if s.name in by_name else s for s in prefilled)


@dataclass(frozen=True)
class Specialisation:
    """What Triton's JIT assumes of the values a launch passes, and so what an offline compile must assume
    to compile the kernel that runs. The JIT compiles an integer argument equal to 1 as the constant 1 (a
    stride of 1 then tells the compiler the loads are contiguous, so it can vectorise and pipeline them),
    and marks pointers (torch allocations are 16-byte aligned) and integers that are multiples of 16 as
    divisible by 16. An integer given no value is compiled for any value: what a launch gets only with a
    value that is neither 1 nor a multiple of 16."""

    equal_to_one: tuple[str, ...] = ()       # integers given the value 1
    divisible_by_16: tuple[str, ...] = ()    # pointers, and integers given a multiple of 16
    no_value: tuple[str, ...] = ()           # integers given no value: compiled unspecialised


def jit_specialisation(specs: tuple[ArgSpec, ...], kernel: KernelInfo | None = None) -> Specialisation:
    """The specialisation Triton's JIT gives a launch with these specs' values (honouring the kernel's
    do_not_specialize and do_not_specialize_on_alignment)."""
    frozen = set(kernel.do_not_specialize) if kernel else set()
    unaligned = frozen | (set(kernel.do_not_specialize_on_alignment) if kernel else set())
    ones, divisible, no_value = [], [], []
    for spec in specs:
        if spec.kind == "pointer":
            if spec.name not in unaligned:
                divisible.append(spec.name)
            continue
        if spec.kind != "scalar" or not spec.dtype or spec.dtype[0] not in "iu" or spec.dtype == "i1":
            continue
        if spec.value is None:
            no_value.append(spec.name)
        elif isinstance(spec.value, int) and not isinstance(spec.value, bool) and spec.name not in frozen:
            if spec.value == 1:
                ones.append(spec.name)
            elif spec.value % 16 == 0 and spec.name not in unaligned:
                divisible.append(spec.name)
    return Specialisation(tuple(ones), tuple(divisible), tuple(no_value))


def specialised_inputs(specs: tuple[ArgSpec, ...], specialisation: Specialisation,
                       config: ConfigSpec | None = None) -> tuple[tuple, tuple]:
    """compile_inputs as the JIT compiles them: each integer equal to one becomes the constant 1."""
    signature, constexprs = compile_inputs(specs, config)
    ones = set(specialisation.equal_to_one)
    signature = tuple((name, "constexpr" if name in ones else kind) for name, kind in signature)
    return signature, constexprs + tuple((name, 1) for name in specialisation.equal_to_one)


def compile_inputs(specs: tuple[ArgSpec, ...], config: ConfigSpec | None = None) -> tuple[tuple, tuple]:
    """(signature, constexprs) for one compile, as CompileJob takes them; a config's values win."""
    overrides = dict(config.constexprs) if config else {}
    signature, constexprs = [], []
    for spec in specs:
        signature.append((spec.name, spec.triton_type))
        if spec.kind == "constexpr":
            if spec.name in overrides:
                constexprs.append((spec.name, overrides[spec.name]))
            elif spec.tuned or spec.needs_value:
                raise ArgSpecError("missing_value", spec.name)
            else:
                constexprs.append((spec.name, spec.value))
    return tuple(signature), tuple(constexprs)
