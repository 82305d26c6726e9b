"""The class sweep (bench_tools/class_sweep.py): each class's draws span its whole range, log-uniformly, in every
dtype, and always move at least the floor of bytes; a run checks and times each shape and its record reads back
as written."""
import gc
import math
import weakref

import pytest
import torch

from bench_tools import class_sweep as cs
from softmax_bench.records import load_class_runs
from softmax_bench.timers import Timing


def test_draws_cover_each_class_whole_range_in_every_dtype():
    draws = cs.draw(7, per_class=600, min_mb=64, max_mb=256)
    for c in cs.CLASSES:
        got = [s for s in draws if s.cls == c.key]
        assert {s.dtype for s in got} == set(cs.DTYPES)
        reduce = [s.n_reduce for s in got]
        lo, hi = c.reduce
        assert lo <= min(reduce) and max(reduce) <= hi
        span = math.log(hi / lo)
        # log-uniform: the bottom and the top tenth of the log range are both reached, and the middle holds
        # about its share (not a generator narrowed to where it runs well)
        assert math.log(min(reduce) / lo) < 0.1 * span and math.log(hi / max(reduce)) < 0.1 * span, c.key
        below_mid = sum(math.log(r / lo) < span / 2 for r in reduce) / len(reduce)
        assert 0.4 < below_mid < 0.6, c.key
        if c.inner:
            inner = [s.shape[1] if c.transposed else s.shape[2] for s in got]
            ilo, ihi = c.inner
            ispan = math.log(ihi / ilo)
            assert ilo <= min(inner) and max(inner) <= ihi
            assert math.log(min(inner) / ilo) < 0.1 * ispan and math.log(ihi / max(inner)) < 0.1 * ispan, c.key
        for s in got:
            assert s.forward_bytes() >= 64e6
            assert s.transposed == c.transposed
            assert (s.dim == len(s.shape) - 1) == (c.inner is None or c.transposed)


def test_a_seed_fixes_the_draw_and_narrowing_the_classes_keeps_the_shapes():
    assert cs.draw(3) == cs.draw(3)
    assert cs.draw(3) != cs.draw(4)
    assert cs.draw(3, ["short_rows"]) == [s for s in cs.draw(3) if s.cls == "short_rows"]
    with pytest.raises(ValueError):
        cs.draw(3, ["no_such_class"])


def test_the_layouts_are_the_classes_they_name():
    import torch
    from softmax_bench import models
    from softmax_core.plans.strided import reduction_layout

    for s in cs.draw(11, per_class=1, min_mb=0.0001, max_mb=0.0002):
        if s.numel > 2_000_000:
            continue
        x = models.make_input(cs.as_case(s, 0))
        assert tuple(x.shape) == s.shape and x.dtype == getattr(torch, s.dtype)
        layout = reduction_layout(tuple(x.shape), x.stride(), s.dim)
        if s.cls.startswith("dim_") or s.cls == "transposed":
            assert layout.n_inner > 1 and x.stride(s.dim) > 1, s
        else:
            assert layout.n_inner == 1 and x.stride(s.dim) == 1, s


def fake_timer(fn):
    fn()
    return Timing(1.0, 1.0, 1.0, 1.0, 1.0)


def test_a_small_run_checks_times_and_its_record_round_trips(tmp_path):
    shapes = [cs.DrawnShape("dim_inner_wide", (3, 5, 70), 1, "float32"),
              cs.DrawnShape("transposed", (2, 9, 300), 2, "bfloat16", True),
              cs.DrawnShape("short_rows", (33, 17), 1, "float16")]
    run, paths = cs.run_class_sweep(shapes, 5, ["copy", "tuned", "torch"], timer=fake_timer, out=tmp_path,
                                    command="test")
    f = run.frame
    assert set(f.status) == {"ok"}, f[f.status != "ok"][["case", "provider", "direction", "reason"]]
    assert len(f) == 3 * 3 * 3 and set(f["class"]) == {"dim_inner_wide", "transposed", "short_rows"}
    assert set(f.direction) == {"forward", "backward", "backward_node"}
    assert run.provenance["sweep"] == "classes" and run.provenance["seed"] == 5
    assert run.provenance["torch"] and run.provenance["triton"]
    back = load_class_runs(tmp_path)
    assert len(back) == 1 and back[0].provenance == {**run.provenance, "csv": paths[0].name}
    got = back[0].frame
    assert list(got["case"]) == list(f["case"]) and list(got.ms_median) == list(f.ms_median)
    summary = cs.class_summary(back[0])
    assert set(summary["class"]) == {"dim_inner_wide", "transposed", "short_rows"}
    assert (summary["min"] == 1.0).all() and (summary["worst_vs_torch"] == 1.0).all()
    table = cs.markdown_table(back)
    assert "dim inner wide" in table and "seed 5: min / median (shapes)" in table and paths[0].name in table


def test_the_command_line_says_what_it_does_and_refuses_bad_input(capsys):
    with pytest.raises(SystemExit) as exit:
        cs.main(["--help"])
    assert exit.value.code == 0 and "--shapes-per-class" in capsys.readouterr().out
    for bad in (["--classes", "nope", "--seed", "1"], [], ["--seed", "1", "--shapes-per-class", "0"]):
        with pytest.raises(SystemExit) as exit:
            cs.main(bad)
        assert exit.value.code == 2
    assert cs.main(["--seed", "1", "--list", "--classes", "short_rows", "--shapes-per-class", "2"]) == 0
    assert capsys.readouterr().out.count("short_rows") == 2


def test_the_documented_tables_are_the_recorded_ones():
    doc = cs.DOC.read_text()
    for table in cs.TABLES:
        written = doc[doc.index(table.begin) + len(table.begin):doc.index(table.end)].strip()
        runs = cs.table_runs(table)
        assert runs, f"no recorded class sweep in assets/benchmarks/{table.folder}/"
        assert written == cs.markdown_table(runs, table.folder).strip(), \
            "run: python -m bench_tools.class_sweep --table --write"
        assert all("-before-" not in r.provenance["csv"] for r in runs)
    h200, h100 = (cs.table_runs(t) for t in cs.TABLES)
    assert {r.provenance["seed"] for r in h200} >= {1, 2}
    assert {r.provenance["gpu"] for r in h100} == {"NVIDIA H100 80GB HBM3"} and {4711, 31337} <= {
        r.provenance["seed"] for r in h100}


def test_the_backward_node_is_the_softmaxs_own_and_gives_autograds_dx():
    """"backward_node" applies y.grad_fn to dy without the engine: the same dx as torch.autograd.grad, for
    softmax_core's row and any-dim nodes and torch's; a node that is not a softmax's is refused, not timed."""
    import softmax_core as sc
    from softmax_bench.models import NotASoftmaxNode, backward_node_call

    def node_call(softmax, shape, dim):
        x = torch.randn(shape, dtype=torch.float32, requires_grad=True)
        y = softmax(x, dim)
        dy = torch.randn_like(y)
        return backward_node_call(y, dy), torch.autograd.grad(y, x, dy, retain_graph=True)[0]

    for shape, dim in (((5, 37), -1), ((3, 9, 70), 1)):
        for softmax in (sc.softmax, torch.softmax):
            call, want = node_call(softmax, shape, dim)      # y and x are gone: the call keeps what it needs
            gc.collect()
            for _ in range(2):                                # timed many times, so it must repeat
                got = call()
                assert got.grad_fn is None and torch.allclose(got, want, atol=1e-6), (shape, softmax)
    # The call owns y, and so the node: a Python Function's node lives as long as its output (on torch 2.11 a
    # node whose y is gone can no longer unpack the saved y).
    y = sc.softmax(torch.randn(6, 37, requires_grad=True), -1)
    alive = weakref.ref(y)
    call = backward_node_call(y, torch.randn_like(y))
    del y
    gc.collect()
    assert alive() is not None and call().shape == (6, 37)
    y = torch.softmax(torch.randn(4, 6, requires_grad=True), -1).t()
    with pytest.raises(NotASoftmaxNode):
        backward_node_call(y, torch.ones_like(y))
