import math
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

LOG2E = gl.constexpr(1.4426950408889634)


@gluon.jit
def _row_layout(VEC: gl.constexpr):
    return gl.BlockedLayout([VEC], [32], [gl.num_warps()], [0],
                            cga_layout=((1,), (2,), (4,), (8,), (16,))[:gl.num_ctas().bit_length() - 1])


@gluon.jit
def cluster_softmax_kernel(x_ptr, y_ptr, x_row_stride, y_row_stride, n_rows, n_cols,
                           BLOCK_N: gl.constexpr, VEC: gl.constexpr):
    cga: gl.constexpr = ((1,), (2,), (4,), (8,), (16,))[:gl.num_ctas().bit_length() - 1]
    layout: gl.constexpr = gl.BlockedLayout([VEC], [32], [gl.num_warps()], [0], cga_layout=cga)
    offs = gl.arange(0, BLOCK_N, layout)
    mask = offs < n_cols
    for row in range(gl.program_id(0), n_rows, gl.num_programs(0)):
        row64 = row.to(gl.int64)
        x = gl.load(x_ptr + row64 * x_row_stride + offs, mask=mask, other=-float("inf")).to(gl.float32)
        m = gl.max(x, axis=0)
        e = gl.exp2((x - m) * LOG2E)
        s = gl.sum(e, axis=0)
        y = e * (1.0 / s)
        gl.store(y_ptr + row64 * y_row_stride + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@gluon.jit
def cluster_softmax_backward_kernel(y_ptr, dy_ptr, dx_ptr, y_row_stride, dy_row_stride, dx_row_stride,
                                    n_rows, n_cols, BLOCK_N: gl.constexpr, VEC: gl.constexpr):
    cga: gl.constexpr = ((1,), (2,), (4,), (8,), (16,))[:gl.num_ctas().bit_length() - 1]
    layout: gl.constexpr = gl.BlockedLayout([VEC], [32], [gl.num_warps()], [0], cga_layout=cga)
    offs = gl.arange(0, BLOCK_N, layout)
    mask = offs < n_cols
    for row in range(gl.program_id(0), n_rows, gl.num_programs(0)):
        row64 = row.to(gl.int64)
        y = gl.load(y_ptr + row64 * y_row_stride + offs, mask=mask, other=0.0).to(gl.float32)
        dy = gl.load(dy_ptr + row64 * dy_row_stride + offs, mask=mask, other=0.0).to(gl.float32)
        dot = gl.sum(y * dy, axis=0)
        gl.store(dx_ptr + row64 * dx_row_stride + offs, (y * (dy - dot)).to(dx_ptr.dtype.element_ty), mask=mask)
