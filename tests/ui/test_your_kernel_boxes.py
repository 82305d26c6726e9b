"""Your kernel's Arguments, Sizes and Grid boxes read for a kernel: lines left from another kernel, missing,
malformed and duplicated, in a seeded draw. Every box is either read or refused with a BoxProblem that names
the box, the line as typed and the name at fault, and whose words (EN and 中文) quote them; nothing else is
ever raised."""
import random

import pytest

from explorer_ui import your_kernel as yk
from explorer_ui.i18n import text_in
from kernel_inspector import argspec, examples, gate

KERNELS = {name: gate.check_source(src).kernels[-1] for name, src in examples.EXAMPLES.items()}
PREFILLED = {name: argspec.prefill(kernel) for name, kernel in KERNELS.items()}


def words(problem, lang):
    return yk.box_problem_text(problem, tr=lambda key, /, **v: text_in(lang, key, **v))


def refused(kernel, args="", sizes="", grid=""):
    with pytest.raises(yk.BoxError) as caught:
        yk.read_boxes(PREFILLED[kernel], args, sizes, grid)
    return caught.value.problem


def test_the_examples_own_boxes_are_read():
    for name in examples.EXAMPLES:
        sizes = "\n".join(f"{k}={'x'.join(map(str, v))}" for k, v in examples.SIZES[name]["sizes"].items())
        boxes = yk.read_boxes(PREFILLED[name], "\n".join(examples.ARGUMENTS[name]), sizes,
                              "x".join(map(str, examples.SIZES[name]["grid"])))
        assert boxes.grid == tuple(examples.SIZES[name]["grid"]) and boxes.moved > 0


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_new_kernel_under_the_old_arguments_names_the_stale_line(lang):
    """The issue's case: the vector-add kernel pasted over the softmax example, its arguments still there."""
    problem = refused("vector_add", "\n".join(examples.ARGUMENTS["softmax"]))
    assert (problem.box, problem.code, problem.line, problem.detail) == ("args", "unknown_argument", 1, "output_ptr")
    assert set(problem.known) == {s.name for s in PREFILLED["vector_add"]}
    text = words(problem, lang)
    assert "`output_ptr=*fp32`" in text and "`output_ptr`" in text and "`n_elements`" in text
    # the page's way out: the kernel's own arguments; then only what the kernel leaves open is asked for
    own = yk.own_args_text(PREFILLED["vector_add"])
    assert refused("vector_add", own).detail == "BLOCK"
    assert yk.read_boxes(PREFILLED["vector_add"], own + "\nBLOCK=1024", "", "").specs


def test_each_kind_of_wrong_line_gets_its_own_problem():
    cases = [
        (dict(args="x_ptr *fp32"), ("args", "no_equals", 1, "x_ptr *fp32")),
        (dict(args="BLOCK=1024\n2x=*fp32"), ("args", "bad_name", 2, "2x")),
        (dict(args="x_ptr=*fp13"), ("args", "unknown_type", 1, "*fp13")),
        (dict(args="BLOCK=lots"), ("args", "bad_value", 1, "lots")),
        (dict(args="BLOCK=1024\n\nBLOCK=2048"), ("args", "duplicate_argument", 3, "BLOCK")),
        (dict(sizes="x_ptr 4096"), ("sizes", "size_no_equals", 1, "x_ptr 4096")),
        (dict(sizes="x_ptr=4096x0"), ("sizes", "size_bad_shape", 1, "4096x0")),
        (dict(sizes="x_ptr=many"), ("sizes", "size_bad_shape", 1, "many")),
        (dict(sizes="input_ptr=4096"), ("sizes", "size_unknown", 1, "input_ptr")),
        (dict(sizes="n_elements=4096"), ("sizes", "size_not_pointer", 1, "n_elements")),
        (dict(sizes="x_ptr=8\ny_ptr=8\nx_ptr=16"), ("sizes", "size_duplicate", 3, "x_ptr")),
        (dict(grid="1024x-1"), ("grid", "grid_bad", 0, "1024x-1")),
        (dict(grid="2x2x2x2"), ("grid", "grid_too_many_dims", 0, "4")),
    ]
    for boxes, (box, code, line, detail) in cases:
        problem = refused("vector_add", **{"args": "BLOCK=1024", **boxes})
        assert (problem.box, problem.code, problem.line, problem.detail) == (box, code, line, detail), boxes
    assert refused("vector_add", args="BLOCK=1\nBLOCK=2").first_line == 1


def test_a_constexpr_with_no_default_is_asked_for_by_name():
    source = ("import triton\nimport triton.language as tl\n\n@triton.jit\n"
              "def k(x_ptr, n, BLOCK: tl.constexpr):\n    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)\n")
    prefilled = argspec.prefill(gate.check_source(source).kernels[0])
    with pytest.raises(yk.BoxError) as caught:
        yk.read_boxes(prefilled, "", "", "")
    assert (caught.value.problem.code, caught.value.problem.detail) == ("missing_value", "BLOCK")
    assert "BLOCK=1024" in words(caught.value.problem, "en")
    assert yk.read_boxes(prefilled, "BLOCK=256", "", "").specs[-1].value == 256


# Pieces a student's boxes are made of: good lines of every example (stale for the others), and damaged ones.
def _good_lines():
    out = []
    for name in examples.EXAMPLES:
        out += list(examples.ARGUMENTS[name])
    return out


DAMAGE = ("", "   ", "=", "x_ptr", "x_ptr=", "=*fp32", "x_ptr=*", "x_ptr=**fp32", "n=i32:", "n=i32:abc",
          "BLOCK=1_0_2_4", "BLOCK=0x400", "BLOCK=tl.float16", "BLOCK=tl.", "BLOCK=True", "__class__=1",
          "BLOCK=1e400", "x_ptr=*fp32=*fp16", "BLOCK = 2048  ", "BLOCK=-1", "é=1", "`BLOCK`=1", "BLOCK=1024 # note")
SIZE_DAMAGE = ("x_ptr=", "x_ptr=x", "x_ptr=4096x", "x_ptr=4096,781", "x_ptr=4096*781", "x_ptr=-4", "x_ptr=1.5",
               "x_ptr=99999999999999999999", "=4096", "x_ptr==4", "n_elements=4", "__x=1", "x_ptr=4096 x 781")
GRID_DAMAGE = ("", "0", "1x0", "1024", "64x8", "1,2,3", "abc", "2x2x2x2", "1e3", "-1", "99999999999999999999", "x")


def _draw(rng: random.Random, kernel: str):
    good = _good_lines()
    own_sizes = [f"{k}={'x'.join(map(str, v))}" for name in examples.EXAMPLES
                 for k, v in examples.SIZES[name]["sizes"].items()]
    args = [rng.choice(good + list(DAMAGE)) for _ in range(rng.randint(0, 6))]
    if rng.random() < 0.5:
        args = list(examples.ARGUMENTS[kernel]) + args                  # the right lines, with extras
    if rng.random() < 0.3 and args:
        args.append(rng.choice(args))                                  # a line given twice
    sizes = [rng.choice(own_sizes + list(SIZE_DAMAGE)) for _ in range(rng.randint(0, 4))]
    return "\n".join(args), "\n".join(sizes), rng.choice(GRID_DAMAGE)


@pytest.mark.parametrize("seed", range(4))
def test_any_boxes_are_read_or_named_as_wrong(seed):
    rng = random.Random(seed)
    outcomes = {}
    for _ in range(150):
        kernel = rng.choice(list(examples.EXAMPLES))
        args, sizes, grid = _draw(rng, kernel)
        try:
            yk.read_boxes(PREFILLED[kernel], args, sizes, grid)
            outcomes["read"] = outcomes.get("read", 0) + 1
            continue
        except yk.BoxError as err:
            problem = err.problem
        outcomes[problem.code] = outcomes.get(problem.code, 0) + 1
        box_text = {"args": args, "sizes": sizes, "grid": grid}[problem.box]
        if problem.line:      # the line named is the line as typed, at that place in its box
            assert box_text.splitlines()[problem.line - 1].strip() == problem.typed
        for lang in ("en", "zh"):
            text = words(problem, lang)
            assert "{" not in text and "Traceback" not in text
            assert problem.detail in text, (problem, text)
            if problem.line:
                assert str(problem.line) in text
    assert len(outcomes) >= 5, outcomes      # the draw reaches many kinds of problem, and some boxes read


def test_a_placeholder_may_be_named_like_the_functions_own_arguments():
    """The crash of the issue: yk_bad_arg's {text} met format_text's own `text` argument."""
    from explorer_ui.i18n import format_text
    from softmax_core.words import format_counted

    assert format_text("{text} {key} {lang}", text="a", key="b", lang="c") == "a b c"
    assert format_counted("{text} {n:,|line|lines}", text="x", n=2) == "x 2 lines"
    assert text_in("en", "yk_box_line", box="Arguments", line=3) == "Arguments, line 3"
