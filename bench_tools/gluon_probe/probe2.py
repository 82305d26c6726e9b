"""Gluon cluster rows, one exchange a row, optional prefetch: variants beside copy and softmax_core's plan."""
import json, os, sys, time
import torch, triton
sys.path.insert(0, os.path.dirname(__file__))
from cluster2 import cluster2_softmax_kernel, cluster2_backward_kernel
import softmax_core as sc
from softmax_core.plans.choose import plan_softmax
from softmax_core.launch.api import softmax_backward
from softmax_core.hardware.gpu import default_gpu

OUT = os.environ.get("OUT", "/tmp")
SMS = torch.cuda.get_device_properties(0).multi_processor_count
Q = [0.5, 0.2, 0.8]
def bench(fn):
    return triton.testing.do_bench(fn, quantiles=Q, rep=50, warmup=10)
rows = []
def record(**r):
    rows.append(r); print(json.dumps(r), flush=True)
def dump():
    json.dump(dict(triton=triton.__version__, torch=torch.__version__, gpu=torch.cuda.get_device_name(), rows=rows),
              open(os.path.join(OUT, "gluon_probe2.json"), "w"))
SHAPES = [(4096, 128256, torch.bfloat16), (8192, 65536, torch.bfloat16), (16384, 32000, torch.bfloat16), (2048, 131072, torch.float32)]
gpu = default_gpu()
START = time.time()
for M, N, dt in SHAPES:
    torch.manual_seed(0)
    x = torch.randn(M, N, device="cuda", dtype=dt) * 3
    y = torch.empty_like(x); dy = torch.randn_like(x); dx = torch.empty_like(x)
    nf, nb = 2 * x.numel() * x.element_size(), 3 * x.numel() * x.element_size()
    ref = torch.softmax(x.float(), -1); yref = ref.to(dt)
    dxref = ref * (dy.float() - (ref * dy.float()).sum(-1, keepdim=True))
    base = dict(M=M, N=N, dtype=str(dt).split(".")[-1])
    t = bench(lambda: y.copy_(x)); record(**base, direction="forward", provider="copy", ms=t)
    t = bench(lambda: sc.softmax(x, -1)); record(**base, direction="forward", provider="ours", ms=t)
    t = bench(lambda: torch.add(x, dy, out=y)); record(**base, direction="backward", provider="copy", ms=t)
    pb = plan_softmax(M, N, dt, gpu, "backward")
    t = bench(lambda: softmax_backward(yref, dy, pb)); record(**base, direction="backward", provider="ours", ms=t, path=pb.path)
    block = triton.next_power_of_2(N); vec = 16 // x.element_size()
    for c in (2, 4, 8):
        for w in (4, 8, 16):
            per = block // c
            if per < vec * 32 * w or per // (32 * w) > 64 * vec // 4 or time.time() - START > 480:
                continue
            for pf in (0, 1):
                for direction in ("forward", "backward"):
                    if direction == "backward" and pf:
                        continue
                    for g in (0, 1, 2, 3):
                        grid = (M,) if g == 0 else (min(M, SMS * g // c),)
                        try:
                            if direction == "forward":
                                y.zero_()
                                f = lambda: cluster2_softmax_kernel[grid](x, y, x.stride(0), y.stride(0), M, N, PER=per, VEC=vec, PREFETCH=pf, num_warps=w, num_ctas=c)
                                k = f(); torch.cuda.synchronize()
                                err = (y.float() - ref).abs().max().item()
                            else:
                                dx.zero_()
                                f = lambda: cluster2_backward_kernel[grid](yref, dy, dx, yref.stride(0), dy.stride(0), dx.stride(0), M, N, PER=per, VEC=vec, PREFETCH=0, num_warps=w, num_ctas=c)
                                k = f(); torch.cuda.synchronize()
                                err = ((dx.float() - dxref).abs().max() / dxref.abs().max()).item()
                            t = bench(f)
                            record(**base, direction=direction, provider=f"g2 c{c} w{w} pf{pf} g{g}", grid=grid[0], ms=t, err=err,
                                   n_regs=getattr(k, "n_regs", None), n_spills=getattr(k, "n_spills", None))
                        except Exception as e:
                            record(**base, direction=direction, provider=f"g2 c{c} w{w} pf{pf} g{g}", error=repr(e)[:300])
    dump()
    del x, y, dy, dx, ref, yref, dxref
    torch.cuda.empty_cache()
dump()
