"""Your kernel, without compiling: the source gate refuses what a kernel file does not need (hostile inputs
included, each with its line), argument specs from text, PTX line links, the floors and the what-if."""
import re
import time

import pytest

import softmax_core as sc
from kernel_inspector import argspec, examples, gate, inspect as ki, ptxlines
from kernel_inspector.rules import REFUSAL_CODES, SourceRefused

HEAD = "import triton\nimport triton.language as tl\n\n\n"


def refusal(text: str):
    with pytest.raises(SourceRefused) as info:
        gate.check_source(text)
    assert info.value.refusal.code in REFUSAL_CODES
    return info.value.refusal


@pytest.mark.parametrize("name", sorted(examples.EXAMPLES))
def test_the_four_examples_pass_the_gate(name):
    kernel = gate.check_source(examples.EXAMPLES[name]).kernel()
    assert kernel.params and kernel.line == 6


@pytest.mark.parametrize("text, code, line, detail", [
    ("import os\nos.system('touch /tmp/x')\n", "import_not_allowed", 1, "os"),
    (HEAD + "print('hi')\n", "statement_not_allowed", 5, "Expr"),
    (HEAD + "@triton.jit\ndef k(x_ptr, n=open('/etc/passwd')):\n    pass\n", "default_not_constant", 6, "open"),
    (HEAD + "@triton.jit\ndef k(x_ptr, n: os.system('id')):\n    pass\n", "annotation_not_allowed", 6, "os.system('id')"),
    (HEAD + "@triton.jit\ndef k(x_ptr):\n    os.system('id')\n", "unknown_name", 7, "os"),
    (HEAD + "@triton.jit\ndef k(x_ptr):\n    m = __import__('os')\n", "dunder_name", 7, "__import__"),
    (HEAD + "@triton.jit\ndef k(x_ptr):\n    f = getattr(tl, 'load')\n", "forbidden_name", 7, "getattr"),
    (HEAD + "@triton.jit\ndef k(x_ptr):\n    f = open('/etc/passwd')\n", "forbidden_name", 7, "open"),
    (HEAD + "@triton.jit\ndef k(x_ptr):\n    y = x_ptr.__class__\n", "private_attribute", 7, "__class__"),
    (HEAD + "@triton.jit\ndef k(x_ptr):\n    y = triton.runtime\n", "attribute_not_allowed", 7, "triton.runtime"),
    (HEAD + "@triton.jit\ndef k(x_ptr):\n    y = tl.extra.pkgutil\n", "attribute_not_allowed", 7, "triton.language.extra.pkgutil"),
    (HEAD + "@triton.jit\ndef k(x_ptr):\n    y = tl.core.builtins\n", "attribute_not_allowed", 7, "triton.language.core"),
    (HEAD + "@triton.jit\ndef k(x_ptr):\n    m = tl\n", "module_as_value", 7, "tl"),
    (HEAD + "@triton.jit\ndef k(x_ptr):\n    import os\n", "import_not_allowed", 7, "import"),
    (HEAD + "@triton.jit\ndef k(x_ptr):\n    f = lambda: 1\n", "expression_not_allowed", 7, "Lambda"),
    (HEAD + "def k(x_ptr):\n    pass\n", "function_not_jit", 5, "k"),
    (HEAD + "@triton.heuristics({})\n@triton.jit\ndef k(x_ptr):\n    pass\n", "attribute_not_allowed", 5, "triton.heuristics"),
    (HEAD + "if __name__ == '__main__':\n    pass\n", "statement_not_allowed", 5, "If"),
    (HEAD + "X = 2 ** 10 ** 10\n", "constant_not_allowed", 5, "2 ** 10 ** 10"),
    ("import triton\nfrom triton import runtime\n", "import_not_allowed", 2, "triton.runtime"),
    ("def k(:\n", "syntax_error", 1, "invalid syntax"),
])
def test_hostile_and_unneeded_source_is_refused_with_its_line(text, code, line, detail):
    found = refusal(text)
    assert (found.code, found.line) == (code, line), found
    assert detail in found.detail


def test_a_million_line_file_is_refused_before_parsing():
    text = HEAD + "X = 1\n" * 1_000_000
    started = time.perf_counter()
    found = refusal(text)
    assert found.code == "too_large" and found.value > found.limit
    assert time.perf_counter() - started < 0.5


def test_autotune_configs_and_module_constants_are_read_without_executing():
    text = HEAD + ("BLOCK = tl.constexpr(256)\nCONFIGS = [triton.Config({'BLOCK': 128}, num_warps=2),\n"
                   "           triton.Config({'BLOCK': 512}, num_warps=8, num_stages=2)]\n\n\n"
                   "@triton.autotune(configs=CONFIGS, key=['n'])\n@triton.jit\n"
                   "def k(x_ptr, n, BLOCK: tl.constexpr, DTYPE: tl.constexpr = tl.float16):\n"
                   "    offs = tl.arange(0, BLOCK)\n    tl.store(x_ptr + offs, tl.zeros((BLOCK,), DTYPE), mask=offs < n)\n")
    kf = gate.check_source(text)
    info = kf.kernel("k")
    assert dict(kf.constants)["BLOCK"] == 256
    assert [(c.constexprs, c.num_warps, c.num_stages) for c in info.configs] == [
        ((("BLOCK", 128),), 2, None), ((("BLOCK", 512),), 8, 2)]
    specs = argspec.prefill(info)
    assert [s.text() for s in specs][:2] == ["x_ptr=*fp32", "n=i32"]
    assert specs[2].tuned and specs[3].value.path == "triton.language.float16"
    _, constexprs = argspec.compile_inputs(specs, info.configs[1])
    assert constexprs[0] == ("BLOCK", 512)
    with pytest.raises(argspec.ArgSpecError):
        argspec.compile_inputs(specs, None)


@pytest.mark.parametrize("text, kind, dtype, value", [
    ("x_ptr=*fp32", "pointer", "fp32", None), ("n=i32", "scalar", "i32", None), ("n=i64:4096", "scalar", "i64", 4096),
    ("eps=fp32:1e-5", "scalar", "fp32", 1e-5), ("BLOCK=1024", "constexpr", None, 1024),
    ("EVEN=True", "constexpr", None, True), ("SCALE=0.5", "constexpr", None, 0.5)])
def test_argument_specs_from_text(text, kind, dtype, value):
    spec = argspec.parse_arg(text)
    assert (spec.kind, spec.dtype, spec.value) == (kind, dtype, value)
    assert argspec.parse_arg(spec.text()) == spec


@pytest.mark.parametrize("text, code", [("x_ptr", "no_equals"), ("1x=2", "bad_name"), ("x_ptr=*fp33", "unknown_type"),
                                        ("n=i33:4", "unknown_type"), ("B=abc", "bad_value")])
def test_bad_argument_specs_name_their_problem(text, code):
    with pytest.raises(argspec.ArgSpecError) as info:
        argspec.parse_arg(text)
    assert info.value.code == code


def test_prefill_reads_the_annotations_and_an_unknown_argument_is_refused():
    info = gate.check_source(examples.LAYER_NORM).kernel()
    specs = argspec.prefill(info)
    kinds = {s.name: s.triton_type for s in specs}
    assert kinds == {"x_ptr": "*fp32", "weight_ptr": "*fp32", "bias_ptr": "*fp32", "out_ptr": "*fp32",
                     "row_stride": "i32", "n_cols": "i32", "eps": "fp32", "BLOCK": "constexpr"}
    with pytest.raises(argspec.ArgSpecError) as err:
        argspec.merge(specs, [argspec.parse_arg("nope=i32")])
    assert err.value.code == "unknown_argument"


def test_ptx_lines_link_to_the_source():
    ptx = "\n".join([".version 8.0", ".loc 1 8 20", "ld.global.f32 %f1, [%rd1];", ".loc 1 9 5",
                     "add.f32 %f2, %f1, %f1;", "st.global.f32 [%rd2], %f2;", ".loc 2 3 1", "mov.u32 %r1, 0;",
                     '.file 1 "/tmp/your-kernel-x/user_kernel.py"', '.file 2 "/usr/lib/triton/standard.py"'])
    links = ptxlines.link_lines(ptx, "user_kernel.py")
    assert links.instructions_of(8) == (3,) and links.instructions_of(9) == (5, 6)
    assert links.asm_to_source[7] == 0          # file 2 is not the user's


def test_floors_use_the_catalog_bandwidth_and_peak_rate():
    h200 = sc.catalog_gpu("h200")
    specs = (argspec.parse_arg("x_ptr=*fp16"), argspec.parse_arg("y_ptr=*fp32"), argspec.parse_arg("n=i32"))
    moved = ki.bytes_moved(specs, {"x_ptr": (1000, 3), "y_ptr": (7,)})
    assert moved == 1000 * 3 * 2 + 7 * 4
    f = ki.floors(h200, moved, 1e12, "bf16")
    assert f.memory_seconds == pytest.approx(moved / (h200.memory_bandwidth_gbps * 1e9))
    assert f.compute_seconds == pytest.approx(1e12 / (h200.peak_bf16_tflops * 1e12))
    assert f.bound == ("memory" if f.memory_seconds > f.compute_seconds else "compute")
    with pytest.raises(ValueError):
        ki.bytes_moved(specs, {"n": (3,)})
    assert ki.floors(sc.catalog_gpu("t4"), moved, 1e12, "bf16").compute_seconds is None   # T4: no BF16


def test_every_peak_rate_has_its_source():
    for gpu in sc.gpu_catalog():
        assert gpu.peak_fp32_tflops and gpu.source["peak_fp32_tflops"]
        if gpu.peak_bf16_tflops is not None:
            assert gpu.peak_bf16_tflops > gpu.peak_fp32_tflops
        assert gpu.source["peak_bf16_tflops"]


def test_what_if_follows_the_hardware_rules():
    h200 = sc.catalog_gpu("h200")
    cells = ki.what_if(h200, 0)
    for (regs, warps), (per_sm, limiter) in cells.items():
        occ = sc.occupancy(h200, regs, 0, warps, 1 << 30)
        assert (per_sm, limiter) == (occ.programs_per_sm, occ.limiter)
    assert cells[(96, 1)] == (20, "registers")          # the reference's example: the chapter says 21


def test_page_state_round_trips_and_a_bomb_link_is_refused():
    import base64
    import zlib

    from kernel_inspector import share

    state = {"source": examples.MATMUL, "args": "BLOCK_M=64", "grid": "32x32"}
    text = share.encode_state(state)
    assert share.decode_state(text) == state and len(text) < len(examples.MATMUL)
    bomb = base64.urlsafe_b64encode(zlib.compress(b"[" + b"0," * 10**6 + b"0]")).decode()
    assert share.decode_state(bomb) is None and share.decode_state("not base64 !") is None


def test_every_peak_rate_has_a_source_and_a_missing_one_says_why():
    """The compute floor stands on these: each GPU's FP32 rate is a figure with its citation, and where a
    dense BF16 rate is not given (T4, RTX 4060 Ti, RTX 5090) the citation says that none is published or
    could be checked, instead of a remembered number."""
    import softmax_core as sc

    missing = []
    for gpu in sc.gpu_catalog():
        assert gpu.peak_fp32_tflops and gpu.peak_fp32_tflops > 0, gpu.key
        assert gpu.source["peak_fp32_tflops"] and gpu.source["peak_bf16_tflops"], gpu.key
        if gpu.peak_bf16_tflops is None:
            missing.append(gpu.key)
            assert re.search(r"\bno\b|none|could not", gpu.source["peak_bf16_tflops"], re.I), gpu.key
    assert "rtx5090" in missing
    assert "recalled" not in " ".join(g.source["peak_bf16_tflops"] for g in sc.gpu_catalog())


def test_the_jit_specialisation_follows_the_values_given():
    info = gate.check_source(examples.EXAMPLES["matmul"]).kernel()
    specs = argspec.merge(argspec.prefill(info), [argspec.parse_arg(a) for a in examples.ARGUMENTS["matmul"]]
                          + [argspec.parse_arg("N=i32:4095"), argspec.parse_arg("K=i32")])
    spec = argspec.jit_specialisation(specs, info)
    assert spec.equal_to_one == ("stride_ak", "stride_bn", "stride_cn")
    assert spec.divisible_by_16 == ("a_ptr", "b_ptr", "c_ptr", "M", "stride_am", "stride_bk", "stride_cm")
    assert spec.no_value == ("K",)
    signature, constexprs = argspec.specialised_inputs(specs, spec)
    assert dict(signature)["stride_ak"] == "constexpr" and dict(constexprs)["stride_ak"] == 1
    assert dict(signature)["N"] == "i32" and "N" not in dict(constexprs)


def test_do_not_specialize_is_honoured():
    text = ("import triton\nimport triton.language as tl\n\n\n"
            "@triton.jit(do_not_specialize=['n'], do_not_specialize_on_alignment=[2])\n"
            "def k(x_ptr, n, m, one, BLOCK: tl.constexpr):\n    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)\n")
    info = gate.check_source(text).kernel()
    specs = argspec.merge(argspec.prefill(info), [argspec.parse_arg(a) for a in ("n=i32:1", "m=i32:32", "one=i32:1")])
    spec = argspec.jit_specialisation(specs, info)
    assert (spec.equal_to_one, spec.divisible_by_16) == (("one",), ("x_ptr",))


def test_the_h200_record_is_read_with_its_provenance():
    import json

    from kernel_inspector import record
    from softmax_core.data import assets_dir

    rec = record.read_record()
    raw = json.loads((assets_dir() / record.RECORD).read_text())
    assert rec.provenance.triton == raw["provenance"]["triton"] and rec.provenance.commit
    assert [r.example for r in rec.examples] == [row["example"] for row in raw["rows"]]
    for r, row in zip(rec.examples, raw["rows"]):
        assert r.driver_agrees == row["driver_agrees"]
        assert r.same_compile == ((row["ours_registers"], row["ours_shared_bytes"])
                                  == (row["jit_registers"], row["jit_shared_bytes"]))
    assert record.read_record(assets_dir() / "no-such-record.json") is None
