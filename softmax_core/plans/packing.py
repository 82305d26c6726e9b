"""Words: where a strided tensor's inner run lets a lane load two or four neighbouring 2-byte values as one 32- or
64-bit word (kernels/any_dim.py, load_tile with PACK > 1), and where the planner asks for them.

Pure functions of layouts: nothing here touches a tensor or a device.
"""
from __future__ import annotations

from softmax_core.plans.strided import ReductionLayout


# A lane loads at most a 64-bit word of neighbouring values (Triton has no wider scalar; 16-byte vectors need the
# alignment proofs an arbitrary stride does not give).
WORD_BYTES = 8


def word_values(layout: ReductionLayout, element_bytes: int, address: int = 0) -> int:
    """How many neighbouring inner values (4, 2 or 1) a lane can load as one word from a tensor of this layout whose
    data starts at byte `address`: the inner run is unit-stride, and every element offset a program starts a word
    at (each outer and reduced step, the run's length) is a multiple of the count, as is the address in bytes of
    the word. Where the strides are not, values are loaded one by one (2 bytes a lane for float16)."""
    steps = [layout.n_inner]
    if layout.n_reduce > 1:
        steps.append(layout.reduce_stride)
    if layout.n_outer // max(1, layout.n_outer2) > 1:
        steps.append(layout.outer_stride)
    if layout.n_outer2 > 1:
        steps.append(layout.outer2_stride)
    for count in (4, 2):
        word = count * element_bytes
        if (word <= WORD_BYTES and layout.inner_stride == 1 and address % word == 0
                and all(s % count == 0 for s in steps)):
            return count
    return 1


# Words (word_values, above) are used for 2-byte values (a lane then moves 4 or 8 bytes, where an odd stride would
# leave it 2), never for 4-byte ones. Timed on the H200 on the strided classes' draws of seeds 2727 and 3838 (48
# shapes, each plan beside itself with words; tuning/h200-any-dim-words-20261206.csv): 2-byte values ran 0.34 ->
# 0.50, 0.42 -> 0.64 and 0.72 -> 0.89x copy at narrow inner runs (backward), 0.37 -> 0.55 and 0.49 -> 0.59 forward,
# 0.04 below at worst; float32's 8-byte words were as often slower as faster (275602x24x4 backward 0.80 -> 0.58).
WORD_MAX_ELEMENT_BYTES = 2


def word_packs(layout: ReductionLayout, written: ReductionLayout, element_bytes: int, direction: str,
               addresses: tuple[int, int] = (0, 0)) -> tuple[int, int]:
    """Values a lane loads as one word from the layout's tensor and from the written one (1: one value), for
    either direction (the rule is the same both ways)."""
    if element_bytes > WORD_MAX_ELEMENT_BYTES:
        return 1, 1
    return word_values(layout, element_bytes, addresses[0]), word_values(written, element_bytes, addresses[1])
