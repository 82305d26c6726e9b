"""Four kernel files written for this project, as the "Your kernel" page and its tests start from them.

Each is a whole file a student could paste: imports, `@triton.jit` kernel(s), annotations from which the
argument specs are prefilled. ARGUMENTS holds, per example, the specs the page and the tests use
(`kernel_inspector.argspec` text), and SIZES the tensor shapes and grid for the bytes-moved floor.
REFERENCES computes each example's outputs in float64 with torch from the same inputs, for a run in the
interpreter (interpret.py) to be checked against; torch is imported only when one is called.
"""
from __future__ import annotations

from softmax_core.hardware import dtypes

SOFTMAX = '''\
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    # Each program walks rows row_start, row_start + num_programs, ... (the chapter's persistent loop).
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        mask = col_offsets < n_cols
        row = tl.load(row_start_ptr + col_offsets, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=mask)
'''

VECTOR_ADD = '''\
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    # One program adds one block of BLOCK neighbouring elements; the last block is masked.
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
'''

LAYER_NORM = '''\
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(x_ptr, weight_ptr, bias_ptr, out_ptr, row_stride, n_cols, eps,
                      BLOCK: tl.constexpr):
    # One program normalises one row: mean and variance in fp32, then scale and shift.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    centred = tl.where(mask, x - mean, 0.0)
    variance = tl.sum(centred * centred, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(variance + eps)
    w = tl.load(weight_ptr + cols, mask=mask)
    b = tl.load(bias_ptr + cols, mask=mask)
    y = centred * rstd * w + b
    tl.store(out_ptr + row * row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)
'''

MATMUL = '''\
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr):
    # One program computes one BLOCK_M x BLOCK_N tile of C, walking K in steps of BLOCK_K.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_tile = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_tile = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_tile, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
        b = tl.load(b_tile, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk
    c = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c, acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))
'''

EXAMPLES = {"softmax": SOFTMAX, "vector_add": VECTOR_ADD, "layer_norm": LAYER_NORM, "matmul": MATMUL}

# Argument specs beyond what the annotations prefill (argspec text, one per argument).
ARGUMENTS = {
    "softmax": ("output_ptr=*fp32", "input_ptr=*fp32", "input_row_stride=i32:781", "output_row_stride=i32:781",
                "n_rows=i32:1823", "n_cols=i32:781", "BLOCK_SIZE=1024", "num_stages=4"),
    "vector_add": ("x_ptr=*fp32", "y_ptr=*fp32", "out_ptr=*fp32", "n_elements=i32:1048576", "BLOCK=1024"),
    "layer_norm": ("x_ptr=*fp16", "weight_ptr=*fp16", "bias_ptr=*fp16", "out_ptr=*fp16", "row_stride=i32:4096",
                   "n_cols=i32:4096", "eps=fp32:1e-5", "BLOCK=4096"),
    "matmul": ("a_ptr=*fp16", "b_ptr=*fp16", "c_ptr=*fp16", "M=i32:4096", "N=i32:4096", "K=i32:4096",
               "stride_am=i32:4096", "stride_ak=i32:1", "stride_bk=i32:4096", "stride_bn=i32:1",
               "stride_cm=i32:4096", "stride_cn=i32:1", "BLOCK_M=128", "BLOCK_N=128", "BLOCK_K=32"),
}
# Tensor shapes (for the bytes moved and the --measure inputs), the grid, and the flop count.
SIZES = {
    "softmax": {"sizes": {"input_ptr": (1823, 781), "output_ptr": (1823, 781)}, "grid": (1823,), "flops": None},
    "vector_add": {"sizes": {"x_ptr": (1048576,), "y_ptr": (1048576,), "out_ptr": (1048576,)}, "grid": (1024,),
                   "flops": 1048576},
    "layer_norm": {"sizes": {"x_ptr": (4096, 4096), "weight_ptr": (4096,), "bias_ptr": (4096,),
                             "out_ptr": (4096, 4096)}, "grid": (4096,), "flops": None},
    "matmul": {"sizes": {"a_ptr": (4096, 4096), "b_ptr": (4096, 4096), "c_ptr": (4096, 4096)}, "grid": (32, 32),
               "flops": 2 * 4096 ** 3},
}

# Small sizes for a run in Triton's interpreter (interpret.py): every program runs in numpy on the CPU, so
# these are a few thousand elements, odd where a mask matters. Argument specs, tensor shapes, grid.
SMALL = {
    "softmax": {"args": ("output_ptr=*fp32", "input_ptr=*fp32", "input_row_stride=i32:100",
                         "output_row_stride=i32:100", "n_rows=i32:37", "n_cols=i32:100", "BLOCK_SIZE=128",
                         "num_stages=1"),
                "sizes": {"input_ptr": (37, 100), "output_ptr": (37, 100)}, "grid": (8,)},
    "vector_add": {"args": ("x_ptr=*fp32", "y_ptr=*fp32", "out_ptr=*fp32", "n_elements=i32:1000", "BLOCK=256"),
                   "sizes": {"x_ptr": (1000,), "y_ptr": (1000,), "out_ptr": (1000,)}, "grid": (4,)},
    "layer_norm": {"args": ("x_ptr=*fp16", "weight_ptr=*fp16", "bias_ptr=*fp16", "out_ptr=*fp16",
                            "row_stride=i32:96", "n_cols=i32:96", "eps=fp32:1e-5", "BLOCK=128"),
                   "sizes": {"x_ptr": (20, 96), "weight_ptr": (96,), "bias_ptr": (96,), "out_ptr": (20, 96)},
                   "grid": (20,)},
    "matmul": {"args": ("a_ptr=*fp16", "b_ptr=*fp16", "c_ptr=*fp16", "M=i32:70", "N=i32:50", "K=i32:40",
                        "stride_am=i32:40", "stride_ak=i32:1", "stride_bk=i32:50", "stride_bn=i32:1",
                        "stride_cm=i32:50", "stride_cn=i32:1", "BLOCK_M=32", "BLOCK_N=32", "BLOCK_K=16"),
               "sizes": {"a_ptr": (70, 40), "b_ptr": (40, 50), "c_ptr": (70, 50)}, "grid": (3, 2)},
}


def example_named(source: str) -> str | None:
    """The example a source is, unchanged (its reference applies), else None."""
    return next((name for name, text in EXAMPLES.items() if text == source), None)


def reference_tolerance(triton_type: str) -> float:
    """What the kernel writes must be within this of the reference (reference_error), by the output's element
    type: the library's tolerance for it (an integer output must match exactly)."""
    element = dtypes.by_triton(triton_type)
    return element.tolerance if element is not None and element.tolerance is not None else 0.0


def reference_error(result, expected) -> float:
    """max |result - expected| / max(1, max |expected|): absolute for values below 1, relative above."""
    scale = max(1.0, expected.abs().max().item()) if expected.numel() else 1.0
    return (result.double() - expected).abs().max().item() / scale


def _rows(flat, n_rows: int, n_cols: int, stride: int):
    import torch

    return torch.as_strided(flat.reshape(-1), (n_rows, n_cols), (stride, 1))


def _softmax_reference(before: dict, values: dict, grid) -> dict:
    x, out = before["input_ptr"].double(), before["output_ptr"].double().clone()
    rows = _rows(x, values["n_rows"], values["n_cols"], values["input_row_stride"])
    _rows(out, values["n_rows"], values["n_cols"], values["output_row_stride"]).copy_(rows.softmax(dim=1))
    return {"output_ptr": out}


def _vector_add_reference(before: dict, values: dict, grid) -> dict:
    n = min(values["n_elements"], grid[0] * values["BLOCK"])
    out = before["out_ptr"].double().clone().reshape(-1)
    out[:n] = before["x_ptr"].double().reshape(-1)[:n] + before["y_ptr"].double().reshape(-1)[:n]
    return {"out_ptr": out.reshape(before["out_ptr"].shape)}


def _layer_norm_reference(before: dict, values: dict, grid) -> dict:
    n_rows, n_cols, stride = grid[0], values["n_cols"], values["row_stride"]
    x = _rows(before["x_ptr"].double(), n_rows, n_cols, stride)
    mean = x.mean(dim=1, keepdim=True)
    variance = ((x - mean) ** 2).mean(dim=1, keepdim=True)
    y = (x - mean) / (variance + values["eps"]).sqrt() * before["weight_ptr"].double().reshape(-1)[:n_cols] \
        + before["bias_ptr"].double().reshape(-1)[:n_cols]
    out = before["out_ptr"].double().clone()
    _rows(out, n_rows, n_cols, stride).copy_(y)
    return {"out_ptr": out}


def _matmul_reference(before: dict, values: dict, grid) -> dict:
    import torch

    m, n, k = values["M"], values["N"], values["K"]
    a = torch.as_strided(before["a_ptr"].double().reshape(-1), (m, k), (values["stride_am"], values["stride_ak"]))
    b = torch.as_strided(before["b_ptr"].double().reshape(-1), (k, n), (values["stride_bk"], values["stride_bn"]))
    out = before["c_ptr"].double().clone()
    torch.as_strided(out.reshape(-1), (m, n), (values["stride_cm"], values["stride_cn"])).copy_(a @ b)
    return {"c_ptr": out}


REFERENCES = {"softmax": _softmax_reference, "vector_add": _vector_add_reference,
              "layer_norm": _layer_norm_reference, "matmul": _matmul_reference}
