"""Gluon cluster-row softmax probe on the H200 (triton 3.9): variants beside copy, torch and softmax_core's plan."""
import csv, json, os, sys, time
import torch, triton
sys.path.insert(0, os.path.dirname(__file__))
from cluster import cluster_softmax_kernel, cluster_softmax_backward_kernel
import softmax_core as sc
from softmax_core.plans.choose import plan_softmax
from softmax_core.launch.api import softmax_backward
from softmax_core.hardware.gpu import default_gpu

OUT = os.environ.get("OUT", "/tmp")
SMS = torch.cuda.get_device_properties(0).multi_processor_count
Q = [0.5, 0.2, 0.8]

def bench(fn):
    return triton.testing.do_bench(fn, quantiles=Q, rep=60, warmup=15)

rows = []
def record(**r):
    rows.append(r); print(json.dumps(r), flush=True)

SHAPES = [(8192, 50257, torch.bfloat16), (4096, 128256, torch.bfloat16), (16384, 32000, torch.bfloat16),
          (4096, 100277, torch.bfloat16), (2048, 131072, torch.float32)]
VARIANTS = [(c, w, g) for c in (2, 4, 8) for w in (4, 8, 16) for g in ("rows", "persist2", "persist4")]
gpu = default_gpu()
START = time.time()
for M, N, dt in SHAPES:
    torch.manual_seed(0)
    x = torch.randn(M, N, device="cuda", dtype=dt) * 3
    y = torch.empty_like(x)
    dy = torch.randn_like(x)
    nbytes_f = 2 * x.numel() * x.element_size()
    nbytes_b = 3 * x.numel() * x.element_size()
    ref = torch.softmax(x.float(), -1)
    yref = ref.to(dt)
    dxref = (ref * (dy.float() - (ref * dy.float()).sum(-1, keepdim=True)))
    base = dict(M=M, N=N, dtype=str(dt).split(".")[-1])
    t = bench(lambda: y.copy_(x)); record(**base, direction="forward", provider="copy", ms=t, gbps=nbytes_f / t[0] / 1e6)
    y3 = torch.empty_like(x)
    t = bench(lambda: torch.softmax(x, -1)); record(**base, direction="forward", provider="torch", ms=t, gbps=nbytes_f / t[0] / 1e6)
    try:
        t = bench(lambda: sc.softmax(x, -1)); record(**base, direction="forward", provider="ours", ms=t, gbps=nbytes_f / t[0] / 1e6)
    except Exception as e:
        record(**base, direction="forward", provider="ours", error=repr(e)[:200])
    try:
        plan_b = plan_softmax(M, N, dt, gpu, "backward")
        t = bench(lambda: softmax_backward(yref, dy, plan_b)); record(**base, direction="backward", provider="ours", ms=t, gbps=nbytes_b / t[0] / 1e6, path=plan_b.path)
    except Exception as e:
        record(**base, direction="backward", provider="ours", error=repr(e)[:300])
    t = bench(lambda: torch._softmax_backward_data(dy, yref, -1, dt)); record(**base, direction="backward", provider="torch", ms=t, gbps=nbytes_b / t[0] / 1e6)
    t = bench(lambda: torch.add(x, dy, out=y)); record(**base, direction="backward", provider="copy3", ms=t, gbps=nbytes_b / t[0] / 1e6)
    block = triton.next_power_of_2(N)
    vec = 16 // x.element_size()
    dx = torch.empty_like(x)
    for c, w, g in VARIANTS:
        if time.time() - START > 470:
            break
        per_cta = block // c
        if per_cta < vec * 32 * w or per_cta // (32 * w) > 128:
            continue
        for direction in ("forward", "backward"):
            try:
                if g == "rows":
                    grid = (M,)
                else:
                    grid = (min(M, SMS * int(g[-1]) // c),)
                if direction == "forward":
                    y.zero_()
                    f = lambda: cluster_softmax_kernel[grid](x, y, x.stride(0), y.stride(0), M, N, BLOCK_N=block, VEC=vec, num_warps=w, num_ctas=c)
                    f(); torch.cuda.synchronize()
                    err = (y.float() - ref).abs().max().item()
                    nb = nbytes_f
                else:
                    f = lambda: cluster_softmax_backward_kernel[grid](yref, dy, dx, yref.stride(0), dy.stride(0), dx.stride(0), M, N, BLOCK_N=block, VEC=vec, num_warps=w, num_ctas=c)
                    f(); torch.cuda.synchronize()
                    err = ((dx.float() - dxref).abs().max() / dxref.abs().max()).item()
                    nb = nbytes_b
                kern = (cluster_softmax_kernel if direction == "forward" else cluster_softmax_backward_kernel)
                t = bench(f)
                record(**base, direction=direction, provider=f"gluon c{c} w{w} {g}", ctas=c, warps=w, grid=grid[0], ms=t, gbps=nb / t[0] / 1e6, err=err)
            except Exception as e:
                record(**base, direction=direction, provider=f"gluon c{c} w{w} {g}", error=repr(e)[:300])
    del x, y, dy, ref, yref, dxref, dx
    json.dump(dict(triton=triton.__version__, torch=torch.__version__, gpu=torch.cuda.get_device_name(), rows=rows), open(os.path.join(OUT, 'gluon_probe.json'), 'w'))
    torch.cuda.empty_cache()
with open(os.path.join(OUT, "gluon_probe.json"), "w") as fh:
    json.dump(dict(triton=triton.__version__, torch=torch.__version__, gpu=torch.cuda.get_device_name(), rows=rows), fh)
