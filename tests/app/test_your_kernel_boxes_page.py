"""Your kernel under AppTest with the boxes a student leaves behind: a new kernel pasted over the example with
the example's arguments still there (the page once failed inside its own error message), in EN and 中文, and
a seeded sample of damaged boxes. Each is answered by an error naming the line, never a traceback."""
import random

import pytest

from explorer_ui.i18n import TEXT
from explorer_ui.pages_registry import script
from kernel_inspector import examples
from tests.support.apptest import open_page
from tests.ui.test_your_kernel_boxes import DAMAGE, GRID_DAMAGE, SIZE_DAMAGE

PAGE = script("your_kernel")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_pasted_kernel_under_the_examples_arguments_is_told_which_line_is_stale(lang):
    at = open_page(PAGE, {"lang": lang})
    at.text_area(key="yk_source").set_value(examples.EXAMPLES["vector_add"]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == 1
    message = at.error[0].value
    assert message.startswith(TEXT["yk_box_line"][lang].split("{")[0] or TEXT["yk_box_args"][lang])
    assert "`output_ptr=*fp32`" in message and "`n_elements`" in message
    at.button(key="yk_args_reset").click().run()             # the kernel's own arguments; BLOCK is asked for
    assert not at.exception and "`BLOCK`" in at.error[0].value
    at.text_area(key="yk_args").set_value(at.text_area(key="yk_args").value + "\nBLOCK=1024").run()
    at.text_area(key="yk_sizes").set_value("x_ptr=4096").run()
    assert not at.exception and not at.error, [e.value for e in at.error]


def test_damaged_boxes_are_named_never_a_traceback():
    rng = random.Random(32)
    at = open_page(PAGE, {"lang": "en"})
    at.selectbox(key="yk_example").set_value(TEXT["yk_ex_vector_add"]["en"]).run()
    for _ in range(6):
        args = "\n".join(examples.ARGUMENTS["vector_add"] + (rng.choice(DAMAGE),))
        at.text_area(key="yk_args").set_value(args)
        at.text_area(key="yk_sizes").set_value(rng.choice(SIZE_DAMAGE))
        at.text_input(key="yk_grid").set_value(rng.choice(GRID_DAMAGE)).run()
        assert not at.exception, [e.value for e in at.exception]
        for error in at.error:
            assert error.value.endswith(TEXT["yk_box_problem"]["en"].rsplit("}", 1)[-1]), error.value
