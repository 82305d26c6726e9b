"""Your kernel, compiled in the sandboxed child: the four examples for two GPUs, autotune configs, compile
errors on the student's own line with a hint, and hostile kernels (endless unrolling, a tensor of gigabytes,
more shared memory than the GPU has) that end in a clear failure while the next compile still works."""
from pathlib import Path

import pytest

import softmax_core as sc
from kernel_inspector import examples, inspect as ki, ptxlines, sandbox
from kernel_inspector.worker import SOURCE_NAME

from tests.support.temp_dirs import leftovers, private_temp_dir  # noqa: F401  (the fixture)

pytestmark = pytest.mark.usefixtures("private_temp_dir")   # leftovers() counts in it

HEAD = "import triton\nimport triton.language as tl\n\n\n"
GPUS = [sc.catalog_gpu("h200"), sc.catalog_gpu("mi300x")]
A100 = [sc.catalog_gpu("a100-80gb")]          # sm_80 compiles fastest: the tests that need one GPU use it
SLOW_EXAMPLES = ("layer_norm", "matmul")       # 9-11 s each: in the slow suite


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_EXAMPLES else n
                                  for n in sorted(examples.EXAMPLES)])
def test_the_examples_compile_for_nvidia_and_amd(name):
    before = leftovers()
    kf, specs, report = sandbox.refuse_or_compile(examples.EXAMPLES[name], None, list(examples.ARGUMENTS[name]),
                                                  GPUS, num_warps=4, num_stages=3)
    assert [v.gpu for v in report.variants] == ["h200", "mi300x"]
    for variant, gpu in zip(report.variants, GPUS):
        assert variant.failure is None, variant.failure
        r = variant.resources
        assert 0 < r.n_regs <= 512 and r.shared_bytes >= 0 and r.toolchain
        asm = r.asm["ptx" if gpu.vendor == "nvidia" else "amdgcn"]
        links = ptxlines.link_lines(asm, SOURCE_NAME)
        assert links.source_to_asm, "no instruction linked to the kernel's lines"
        assert min(links.source_to_asm) >= kf.kernel().line
        row = ki.inspect_variant(gpu, variant, 1 << 20).as_json()
        occ = sc.occupancy(gpu, r.n_regs, r.shared_bytes, 4, 1 << 20)
        assert (row["programs_per_sm"], row["limiter"]) == (occ.programs_per_sm, occ.limiter)
    assert leftovers() <= before


def test_every_autotune_config_is_compiled():
    text = HEAD + ("@triton.autotune(configs=[triton.Config({'BLOCK': 128}, num_warps=1),\n"
                   "                          triton.Config({'BLOCK': 1024}, num_warps=8)], key=['n'])\n"
                   "@triton.jit\ndef k(x_ptr, n, BLOCK: tl.constexpr):\n    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                   "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)\n")
    _, _, report = sandbox.refuse_or_compile(text, None, [], A100, 4, 3)
    assert [(v.config, v.num_warps, dict(v.constexprs)["BLOCK"]) for v in report.variants] == [(0, 1, 128), (1, 8, 1024)]
    assert all(v.resources for v in report.variants)


@pytest.mark.parametrize("body, args, hint, line", [
    ("    offs = tl.arange(0, 100)\n    tl.store(x_ptr + offs, 1.0)\n", [], "arange_power_of_two", 7),
    ("    offs = tl.arange(0, n)\n    tl.store(x_ptr + offs, 1.0)\n", [], "missing_constexpr", 7),
    ("    offs = tl.arange(0, 65536)\n    x = tl.load(x_ptr + offs[:, None] * 65536 + offs[None, :])\n"
     "    tl.store(x_ptr + offs, tl.sum(x, axis=0))\n", [], "tensor_too_large", 8),
])
def test_compile_errors_name_the_students_line_and_a_hint(body, args, hint, line):
    text = HEAD + "@triton.jit\ndef k(x_ptr, n):\n" + body
    _, _, report = sandbox.refuse_or_compile(text, None, args, A100, 4, 3)
    failure = report.variants[0].failure
    assert (failure.hint, failure.line) == (hint, line), failure
    assert failure.message


@pytest.mark.slow       # waits out the compile's time limit, like the interpreter's endless-kernel test
def test_endless_unrolling_hits_the_time_limit_and_the_next_compile_works():
    text = HEAD + "@triton.jit\ndef k(x_ptr):\n    for i in tl.static_range(1000000000):\n        tl.store(x_ptr + i, 1.0)\n"
    before = leftovers()
    _, _, report = sandbox.refuse_or_compile(text, None, [], A100, 4, 3, sandbox.SandboxLimits(seconds=4))
    assert report.variants[0].failure.hint == "time_limit"
    assert leftovers() <= before
    _, _, again = sandbox.refuse_or_compile(examples.VECTOR_ADD, None, list(examples.ARGUMENTS["vector_add"]),
                                            A100, 4, 3)
    assert again.variants[0].resources.n_regs > 0


def test_more_shared_memory_than_the_gpu_has_is_shown_not_hidden():
    a100 = A100[0]
    # The tutorial's pipelined row loop keeps num_stages rows in shared memory: 4 x 32768 x 4 B = 512 KiB.
    args = list(examples.ARGUMENTS["softmax"]) + ["BLOCK_SIZE=32768", "num_stages=4"]
    _, _, report = sandbox.refuse_or_compile(examples.SOFTMAX, None, args, [a100], 16, 4)
    variant = report.variants[0]
    row = ki.inspect_variant(a100, variant, 1024)
    assert variant.resources.shared_bytes > a100.max_shared_mem
    assert row.exceeds_shared and row.occupancy.programs_per_sm == 0 and row.occupancy.limiter == "shared memory"


def test_the_child_writes_only_inside_its_temporary_directory(tmp_path):
    env = sandbox.child_env(tmp_path)
    assert set(env) >= {"HOME", "TMPDIR", "TRITON_CACHE_DIR", "TRITON_HOME"}
    for name in ("HOME", "TMPDIR", "TRITON_CACHE_DIR", "TRITON_HOME", "TRITON_DUMP_DIR", "TRITON_OVERRIDE_DIR"):
        assert Path(env[name]).is_relative_to(tmp_path), name
    assert "SOFTMAX_EXPLORER_CACHE" not in env and "PYTHONPATH" not in env


def test_sass_links_to_the_kernel_lines_as_ptx_does():
    """nvdisasm -g prints the cubin's line table: the store's line has the SASS store, every SASS load is
    linked, and lines the file does not have are counted."""
    kf, specs, report = sandbox.refuse_or_compile(examples.VECTOR_ADD, None, list(examples.ARGUMENTS["vector_add"]),
                                                  A100, num_warps=4, num_stages=3)
    sass = report.variants[0].resources.asm["sass"]
    links = ptxlines.link_sass(sass, SOURCE_NAME)
    lines = examples.VECTOR_ADD.splitlines()
    assert links.source_to_asm and min(links.source_to_asm) >= kf.kernel().line
    sass_lines = sass.splitlines()
    store_line = next(n for n, text in enumerate(lines, 1) if "tl.store" in text)
    assert any(" STG" in sass_lines[n - 1] for n in links.instructions_of(store_line))
    loads = [n for n, text in enumerate(sass_lines, 1) if " LDG" in text]
    assert loads and all(links.asm_to_source[n - 1] for n in loads)       # every load is linked to some line
    # Lines past the file's end (Triton 3.9's aligned vector loads) are counted, so the page can say so
    beyond = sum(len(v) for line, v in links.source_to_asm.items() if line > len(lines))
    assert links.outside(len(lines)) == beyond
    assert not ptxlines.link_sass(sass, "some_other_file.py").source_to_asm


def test_the_matmul_compiles_as_the_jit_launches_it_with_every_stage_in_shared_memory():
    # The JIT compiles the strides equal to 1 as constants: the loads are contiguous, so the compiler
    # pipelines them, one A and one B tile in shared memory per stage.
    _, specs, report = sandbox.refuse_or_compile(examples.EXAMPLES["matmul"], None,
                                                 list(examples.ARGUMENTS["matmul"]), GPUS[:1], 4, 3)
    (variant,) = report.variants
    tiles = dict(variant.constexprs)
    stage_bytes = (tiles["BLOCK_M"] + tiles["BLOCK_N"]) * tiles["BLOCK_K"] * 2          # fp16 A and B tiles
    assert variant.resources.shared_bytes == 3 * stage_bytes
    assert variant.resources.n_spills == 0
    assert report.specialisation.equal_to_one == ("stride_ak", "stride_bn", "stride_cn")
