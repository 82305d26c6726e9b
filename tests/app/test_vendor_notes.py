"""Where an AMD GPU is chosen the page says once that SM and warp stand for CU and wavefront, and a page that
predicts from L2 says that AMD's Infinity Cache is not in its model; an NVIDIA GPU gets neither note."""
import pytest

from explorer_ui.i18n import TEXT
from tests.support.apptest import open_page


def _count(at, key, lang="en"):
    fixed = max((part.split("}")[-1] for part in TEXT[key][lang].split("{")), key=len)   # its longest fixed words
    return sum(fixed in str(c.value) for c in at.caption)


@pytest.mark.slow
@pytest.mark.parametrize("path,l2", [("pages/2_memory_traffic.py", True), ("pages/5_gpu_occupancy.py", False)])
def test_amd_pages_carry_one_note_each(path, l2):
    amd = open_page(path, {"gpu": "mi300x"})
    assert _count(amd, "amd_terms") == 1
    assert _count(amd, "amd_infinity_cache") == (1 if l2 else 0)
    nvidia = open_page(path, {"gpu": "h200"})
    assert _count(nvidia, "amd_terms") == 0 and _count(nvidia, "amd_infinity_cache") == 0
