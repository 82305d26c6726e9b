"""One GPU for the lesson: picked once on any page, every page opens on it (the row schedule too), and each
writes it into its link; a link's ?gpu= starts the lesson on that GPU."""
import pytest

from explorer_ui.pages_registry import script
from tests.support.apptest import open_page

PICKERS = {"memory": "memory_gpu", "schedule": "schedule_gpu", "gpu": "gpu_gpu", "longrows": "longrows_gpu",
           "chapter": "chapter_gpu", "glossary": "glossary_gpu"}


def gpu_picked(at, page):
    return next(s for s in at.selectbox if s.key == PICKERS[page]).value


def test_a_gpu_picked_on_the_gpu_page_is_the_one_every_page_opens_on():
    at = open_page(script("gpu"))
    assert gpu_picked(at, "gpu") == "h200"                   # the one default
    next(s for s in at.selectbox if s.key == "gpu_gpu").set_value("t4").run()
    assert at.query_params["gpu"] == ["t4"] or at.query_params["gpu"] == "t4"
    for page in ("schedule", "chapter", "glossary", "gpu"):
        at.switch_page(script(page)).run()
        assert not at.exception, [e.value for e in at.exception]
        assert gpu_picked(at, page) == "t4", page


@pytest.mark.parametrize("start", ["schedule", "chapter"])
def test_a_link_with_a_gpu_starts_the_lesson_there_and_a_new_pick_is_carried(start):
    at = open_page(script(start), {"gpu": "mi300x"})
    assert gpu_picked(at, start) == "mi300x"
    at.switch_page(script("gpu")).run()
    assert gpu_picked(at, "gpu") == "mi300x"
    next(s for s in at.selectbox if s.key == "gpu_gpu").set_value("a100-80gb").run()
    at.switch_page(script(start)).run()
    assert gpu_picked(at, start) == "a100-80gb"
