"""Words: 2 or 4 neighbouring values loaded by one thread as one 32- or 64-bit integer and split in registers.

Triton turns a load into 16-byte vectors only where it can prove the addresses aligned; a row or column that
steps an odd number of values gives it no proof, so each float16 value is a load of its own (2 bytes a thread
per instruction). Where every offset a thread starts at is a multiple of 2 (or 4) values, the same bytes can be
read as one int32 (int64) per 2 (4) values: half (a quarter) of the load instructions. The word's lowest bits
are the value at the lowest address (a little-endian GPU), so value k of a word is (word >> (k * bits)),
truncated to the value's width and bit-cast to its type; a store packs them back the same way.

`values_of` gives a word's values on new trailing axes ([..., 2], or [..., 2, 2] holding value 2i + j at [i, j]),
`words_of` undoes it; a kernel reshapes those axes into its tile (kernels/any_dim.py).
"""
from __future__ import annotations

from softmax_core.hardware import runtime  # noqa: F401  (first: the interpreter, where asked for, before @triton.jit)

import triton
import triton.language as tl

# (A word of PACK values of `bits` each is an int32 where PACK * bits == 32, else an int64: the kernels name it.)


@triton.jit
def _value(words, k: tl.constexpr, ELEM: tl.constexpr):
    """Value k of each word (lowest bits first)."""
    if ELEM.primitive_bitwidth == 16:
        return (words >> (16 * k)).to(tl.int16).to(ELEM, bitcast=True)
    else:
        return (words >> (32 * k)).to(tl.int32).to(ELEM, bitcast=True)


@triton.jit
def values_of(words, PACK: tl.constexpr, ELEM: tl.constexpr):
    """words [...] -> values [..., 2] (PACK 2) or [..., 2, 2] (PACK 4, value 2i + j at [i, j])."""
    if PACK == 2:
        return tl.join(_value(words, 0, ELEM), _value(words, 1, ELEM))
    else:
        return tl.join(tl.join(_value(words, 0, ELEM), _value(words, 2, ELEM)),
                       tl.join(_value(words, 1, ELEM), _value(words, 3, ELEM)))


@triton.jit
def _bits(values, WORD: tl.constexpr):
    """Each value's bits, zero-extended into a word (shifted into place by the caller)."""
    if values.dtype.primitive_bitwidth == 16:
        return values.to(tl.uint16, bitcast=True).to(WORD)
    else:
        return values.to(tl.uint32, bitcast=True).to(WORD)


@triton.jit
def words_of(values, PACK: tl.constexpr, WORD: tl.constexpr):
    """values_of undone: values [..., 2] or [..., 2, 2], already in the stored type -> words [...]."""
    BITS: tl.constexpr = values.dtype.primitive_bitwidth
    if PACK == 2:
        v0, v1 = tl.split(values)
        return _bits(v0, WORD) | (_bits(v1, WORD) << BITS)
    else:
        even, odd = tl.split(values)         # [..., i, 0] and [..., i, 1]: values 2i and 2i + 1
        v0, v2 = tl.split(even)
        v1, v3 = tl.split(odd)
        return (_bits(v0, WORD) | (_bits(v1, WORD) << BITS) | (_bits(v2, WORD) << (2 * BITS))
                | (_bits(v3, WORD) << (3 * BITS)))
