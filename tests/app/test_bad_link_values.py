"""A link's values the app cannot use each get a clear notice, naming what is used instead in words a reader
knows: ?lang= and ?present= (app-wide), and a GPU named by its catalog key in the link but by its name here."""
import pytest

import softmax_core as sc
from tests.support.apptest import open_page


def _notices(at) -> list[str]:
    return [str(i.value) for i in at.info]


@pytest.mark.slow
def test_unknown_language_and_presentation_values_are_named():
    at = open_page("app.py", {"lang": "fr", "present": "banana"})
    assert not at.exception
    notices = _notices(at)
    assert any("lang = fr" in n and "English" in n for n in notices), notices
    assert any("present = banana" in n and "normal layout" in n for n in notices), notices


@pytest.mark.slow
def test_an_unknown_gpu_is_replaced_by_a_gpu_named_by_its_name():
    at = open_page("pages/5_gpu_occupancy.py", {"gpu": "h2000"})
    notices = [n for n in _notices(at) if "gpu = h2000" in n]
    assert len(notices) == 1
    used = at.selectbox(key="gpu_gpu").value
    assert sc.catalog_gpu(used).name in notices[0]
    assert not notices[0].rstrip(".").endswith(f"using {used}")       # not the internal key
