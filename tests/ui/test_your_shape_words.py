"""Your shape (explorer_ui/your_shape.py) says when the strided kernel loads words, with the plan's own figures,
and says nothing of words where the plan loads one value a thread."""
from explorer_ui.i18n import said_in
from explorer_ui.your_shape import plan_text
from softmax_core.hardware.gpu import catalog_gpu
from softmax_core.plans.shapes import plan_shape


def test_the_words_sentence_follows_the_plan():
    h200 = catalog_gpu("h200")
    for shape, dtype, words in (((64, 30, 6), "float16", 2), ((64, 30, 8), "bfloat16", 4),
                                ((64, 30, 6), "float32", 1), ((64, 30, 5), "float16", 1)):
        plan = plan_shape(shape, dtype, 1, h200)
        assert plan.any_dim_plan.pack == words, (shape, dtype)
        text = " ".join(plan_text(plan))
        said = f"loads {words:,} neighbouring values as one {16 * words if dtype != 'float32' else 32 * words}-bit word"
        assert (said in text) == (words > 1), text
        reason = said_in("en", plan.any_dim_plan.reason)
        assert ("as one word" in reason) == (words > 1) and ("1 value at a time" in reason) == (words == 1), reason
