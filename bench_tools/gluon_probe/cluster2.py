import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

LOG2E = gl.constexpr(1.4426950408889634)


@gluon.jit
def _pack(hi, lo):
    return (hi.to(gl.uint32, bitcast=True).to(gl.int64) << 32) | lo.to(gl.uint32, bitcast=True).to(gl.int64)


@gluon.jit
def cluster2_softmax_kernel(x_ptr, y_ptr, x_row_stride, y_row_stride, n_rows, n_cols,
                            PER: gl.constexpr, VEC: gl.constexpr, PREFETCH: gl.constexpr):
    # CTA c of the cluster holds columns [c * PER, (c + 1) * PER) of the row: a [C, PER] tile whose dim 0 is
    # sharded across the cluster, so reductions along dim 1 stay inside each CTA.
    C: gl.constexpr = gl.num_ctas()
    shard: gl.constexpr = ((1, 0), (2, 0), (4, 0), (8, 0), (16, 0))[:C.bit_length() - 1]
    tile: gl.constexpr = gl.BlockedLayout([1, VEC], [1, 32], [1, gl.num_warps()], [1, 0], cga_layout=shard)
    everywhere: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0],
                                                cga_layout=((0,), (0,), (0,), (0,), (0,))[:C.bit_length() - 1])
    part = gl.arange(0, C, gl.SliceLayout(1, tile))
    col = gl.arange(0, PER, gl.SliceLayout(0, tile))
    offs = gl.expand_dims(part, 1) * PER + gl.expand_dims(col, 0)
    mask = offs < n_cols
    first = gl.program_id(0)
    step = gl.num_programs(0)
    x_next = gl.load(x_ptr + first.to(gl.int64) * x_row_stride + offs, mask=mask & (first < n_rows), other=-float("inf"))
    for row in range(first, n_rows, step):
        row64 = row.to(gl.int64)
        if PREFETCH:
            x = x_next
            nxt = row + step
            x_next = gl.load(x_ptr + nxt.to(gl.int64) * x_row_stride + offs, mask=mask & (nxt < n_rows), other=-float("inf"))
        else:
            x = gl.load(x_ptr + row64 * x_row_stride + offs, mask=mask, other=-float("inf"))
        xf = x.to(gl.float32)
        m = gl.max(xf, axis=1)
        shift = gl.where(m == -float("inf"), 0.0, m)
        s = gl.sum(gl.exp2((xf - gl.expand_dims(shift, 1)) * LOG2E), axis=1)
        words = gl.convert_layout(_pack(m, s), everywhere)       # the one exchange between the CTAs
        ms = (words >> 32).to(gl.uint32).to(gl.float32, bitcast=True)
        ss = (words & 0xFFFFFFFF).to(gl.uint32).to(gl.float32, bitcast=True)
        row_max = gl.max(ms, axis=0)
        row_sum = gl.sum(gl.where(ss == 0.0, 0.0, ss * gl.exp2((ms - row_max) * LOG2E)), axis=0)
        y = gl.exp2((xf - row_max) * LOG2E) * (1.0 / row_sum)
        gl.store(y_ptr + row64 * y_row_stride + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@gluon.jit
def cluster2_backward_kernel(y_ptr, dy_ptr, dx_ptr, y_row_stride, dy_row_stride, dx_row_stride, n_rows, n_cols,
                             PER: gl.constexpr, VEC: gl.constexpr, PREFETCH: gl.constexpr):
    C: gl.constexpr = gl.num_ctas()
    shard: gl.constexpr = ((1, 0), (2, 0), (4, 0), (8, 0), (16, 0))[:C.bit_length() - 1]
    tile: gl.constexpr = gl.BlockedLayout([1, VEC], [1, 32], [1, gl.num_warps()], [1, 0], cga_layout=shard)
    everywhere: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0],
                                                cga_layout=((0,), (0,), (0,), (0,), (0,))[:C.bit_length() - 1])
    part = gl.arange(0, C, gl.SliceLayout(1, tile))
    col = gl.arange(0, PER, gl.SliceLayout(0, tile))
    offs = gl.expand_dims(part, 1) * PER + gl.expand_dims(col, 0)
    mask = offs < n_cols
    for row in range(gl.program_id(0), n_rows, gl.num_programs(0)):
        row64 = row.to(gl.int64)
        y = gl.load(y_ptr + row64 * y_row_stride + offs, mask=mask, other=0.0).to(gl.float32)
        dy = gl.load(dy_ptr + row64 * dy_row_stride + offs, mask=mask, other=0.0).to(gl.float32)
        dots = gl.convert_layout(gl.sum(y * dy, axis=1), everywhere)
        dot = gl.sum(dots, axis=0)
        gl.store(dx_ptr + row64 * dx_row_stride + offs, (y * (dy - dot)).to(dx_ptr.dtype.element_ty), mask=mask)
