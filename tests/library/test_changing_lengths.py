"""A model whose sequence length changes every step (attention scores of B*H*S rows of S values) must not compile
for every new length: a plan's compile job (its kernel, constexprs, warps and the JIT's specialisation, which is
what Triton compiles once per process) depends on the width's class, not on the width itself."""
import random

import torch
import triton

from softmax_core.hardware.gpu import catalog_gpu
from softmax_core.plans.choose import plan_softmax
from softmax_core.plans.kernel_jobs import compile_job

H200 = catalog_gpu("h200")


def _job_key(plan, dtype):
    return compile_job(plan.kernel, dtype, dict(plan.constexprs), plan.num_warps, H200, plan.n_cols,
                       plan.aligned).key()


def test_new_lengths_of_a_seen_kind_cost_no_compile():
    rng = random.Random(2026)
    dtype = torch.bfloat16
    lengths = [rng.randint(128, 8192) for _ in range(120)]
    seen: dict = {}
    for length in lengths:
        heads = rng.choice((12, 16, 32))
        for direction in ("forward", "backward"):
            plan = plan_softmax(heads * length, length, dtype, H200, direction)
            # the kind: the padded width, which 16-byte vector loads the width allows, and the direction
            kind = (direction, triton.next_power_of_2(length), length % 16 == 0, length % 8 == 0)
            seen.setdefault(kind, set()).add(_job_key(plan, dtype))
    jobs = set().union(*seen.values())
    # 120 lengths x 2 directions; each kind needs only a few compiles (rows per program and warps vary with the
    # number of rows at the short end), never one per length
    assert len(jobs) <= 3 * len(seen) < len(lengths), (len(jobs), len(seen))
    assert max(len(keys) for keys in seen.values()) <= 3, {k: len(v) for k, v in seen.items()}
