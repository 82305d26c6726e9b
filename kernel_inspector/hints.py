"""What a compile error usually means, as a code the page words: Triton's message is matched against the
mistakes students make most (a non-power-of-two `tl.arange`, a block size that is not a `tl.constexpr`, a
tensor larger than Triton allows, ...). A message matching none gets "none"; the message itself is always
shown beside the hint."""
from __future__ import annotations

import re

# (code, pattern in Triton's message), first match wins.
HINT_PATTERNS = (
    ("arange_power_of_two", r"arange's range must be a power of 2"),
    ("missing_constexpr", r"must be (of type )?(tl\.)?constexpr|is not a constexpr|constexpr\[?.*expected|"
                          r"arange's arguments must be of type tl\.constexpr|shape.*must be.*constexpr"),
    ("tensor_too_large", r"numel .*exceeds triton maximum tensor numel|exceeds.*maximum.*numel"),
    ("dot_shape", r"(dot|Dot).*(must be|>=) ?16|Input shapes should have M >= 16|K >= 16"),
    ("shape_mismatch", r"[Ii]ncompatible (shapes|dimensions)|Cannot broadcast|shape mismatch"),
    ("undefined_name", r"is not defined"),
    ("type_mismatch", r"[Ii]ncompatible types|unsupported operand type|cannot be converted|invalid dtype"),
    ("shared_memory", r"out of resource: shared memory|OutOfResources"),
    ("unsupported_python", r"[Uu]nsupported|not supported|Cannot call @triton\.jit"),
    ("argument_missing", r"KeyError|missing .*argument|signature"),
)
HINT_CODES = tuple(code for code, _ in HINT_PATTERNS) + ("time_limit", "memory_limit", "output_limit", "crashed", "none")


def hint_for(message: str) -> str:
    for code, pattern in HINT_PATTERNS:
        if re.search(pattern, message):
            return code
    return "none"
