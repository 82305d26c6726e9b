"""Where an AMD GPU is chosen the page says once that SM and warp stand for CU and wavefront, and a page that
predicts from the last cache before DRAM says that on AMD that cache is the Infinity Cache (each XCD's L2 serves
only its own CUs) and predicts with it; an NVIDIA GPU gets neither note and keeps its L2."""
import pytest

from explorer_ui.i18n import TEXT
from tests.support.apptest import open_page


def _count(at, key, lang="en"):
    fixed = max((part.split("}")[-1] for part in TEXT[key][lang].split("{")), key=len)   # its longest fixed words
    return sum(fixed in str(c.value) for c in at.caption)


def _says(at, words: str) -> bool:
    return any(words in str(m.value) for m in at.markdown)


@pytest.mark.slow
@pytest.mark.parametrize("path,cache", [("pages/2_memory_traffic.py", True), ("pages/5_gpu_occupancy.py", False)])
def test_amd_pages_carry_one_note_each(path, cache):
    amd = open_page(path, {"gpu": "mi300x"})
    assert _count(amd, "amd_terms") == 1
    assert _count(amd, "amd_infinity_cache") == (1 if cache else 0)
    nvidia = open_page(path, {"gpu": "h200"})
    assert _count(nvidia, "amd_terms") == 0 and _count(nvidia, "amd_infinity_cache") == 0


@pytest.mark.slow
def test_memory_page_predicts_with_the_infinity_cache_on_amd_and_the_l2_on_nvidia():
    # 4096 x 8192 fp32 is 128 MiB: beyond the H200's 60 MiB L2 (and far beyond an XCD's 4 MiB L2), inside the
    # MI300X's 256 MiB Infinity Cache
    shape = {"M": "4096", "N": "8192", "dtype": "float32"}
    amd = open_page("pages/2_memory_traffic.py", {"gpu": "mi300x", **shape})
    assert _says(amd, "256 MiB") and _says(amd, "it fits in the Infinity Cache.")
    nvidia = open_page("pages/2_memory_traffic.py", {"gpu": "h200", **shape})
    assert _says(nvidia, "60 MiB") and _says(nvidia, "it does not fit in the L2.")
    assert not _says(nvidia, "Infinity Cache")
