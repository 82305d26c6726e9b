"""One label for one figure: the catalog's max_shared_mem (232,448 B on an H200) is what ONE program may
use; shared_mem_per_sm (233,472 B) is what an SM divides among its programs. Every text that prints the
first calls it per program; "shared memory per SM" is said only of the second."""
import re

from explorer_ui.i18n import TEXT

PER_SM = {"en": re.compile(r"shared memory per SM|an SM offers"), "zh": re.compile(r"每 ?SM 的?共享内存|一个 SM 只有")}
# the keys whose figure is shared_mem_per_sm, the SM's own budget
SM_BUDGET_KEYS = {"gpu_fig_shared_mem_per_sm", "occupancy_hardware_help"}


def test_only_the_sms_own_budget_is_called_shared_memory_per_sm():
    wrong = [(key, lang) for key, texts in TEXT.items() for lang, text in texts.items()
             if key not in SM_BUDGET_KEYS and PER_SM[lang].search(text)]
    assert not wrong, wrong


def test_the_per_program_limit_is_labelled_per_program_where_it_is_printed():
    for key in ("banner_gpu", "longrows_shared_limit", "longrows_cliff_fail_shared", "gloss_shared_memory_figure",
                "gpu_help_stages"):
        assert "per program" in TEXT[key]["en"] or "one program may use" in TEXT[key]["en"], key
        assert "program" in TEXT[key]["zh"], key
