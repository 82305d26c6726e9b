"""The tuned kernels' configurations the pages offer, and every compile their plans can ask for.

Pages that state a tuned plan's registers, spills, shared memory or programs per SM:
- the GPU page (its tuned path and the tuned row of the GPU comparison): the forward plan of any M x N its
  boxes allow (M 1 ... GPU_PAGE_MAX_M, N 1 ... GPU_PAGE_MAX_N) in every dtype it offers;
- the long-rows and sharing-a-row pages: the path map (M = CHAPTER_M, N in LONG_ROWS_NS), and the L2 chart's
  plans forced onto the tiled path (N in LONG_ROWS_L2_NS).

A plan compiles one kernel specialisation after another, each chosen from the figures of the last (fewer rows
per program where one spills, tiles where a whole row does not fit), so the specialisations a GPU's own figures
lead to cannot be listed without that GPU. `tuned_jobs` lists every one a plan *can* reach: each configuration
class is planned under every combination of answers its compiles can give (fits, or spills: the walk of the
plan's decision tree, `reachable_jobs`), and the union of what they ask for is what the GPU compiles
(`python -m explorer_ui.record_compiles --list-jobs FILE`, then `--jobs FILE` on the GPU). Which (M, N) behave
alike follows from what the planner reads of them (`n_class`, `m_class_rows`); the record's test plans a seeded
sample of every page's boxes from the record alone, so a class this misses, or a new box value, fails there.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import defaults

# the GPU page's boxes (the page reads them from explorer_ui.defaults)
GPU_PAGE_MAX_M = defaults.GPU_PAGE_MAX_M
GPU_PAGE_MAX_N = defaults.GPU_PAGE_MAX_N


@dataclass(frozen=True)
class TunedConfig:
    """One plan a page shows: plan_softmax(n_rows, n_cols, dtype, gpu, path=path), forward."""
    n_rows: int
    n_cols: int
    dtype: str
    path: str | None = None


def page_dtypes() -> tuple[str, ...]:
    from softmax_core.hardware import dtypes

    return tuple(dtypes.TUTORIAL_DTYPES)


def fixed_configs() -> tuple[TunedConfig, ...]:
    """The configurations the long-rows pages show (no box changes them but the dtype)."""
    M = defaults.CHAPTER_M
    return tuple([TunedConfig(M, n, d) for d in page_dtypes() for n in defaults.LONG_ROWS_NS]
                 + [TunedConfig(M, n, d, "tiled") for d in page_dtypes() for n in defaults.LONG_ROWS_L2_NS])


def plan(config: TunedConfig, gpu):
    import softmax_core as sc
    from softmax_core.hardware import dtypes

    return sc.plan_softmax(config.n_rows, config.n_cols, dtypes.torch_dtype(config.dtype), gpu, path=config.path)


def n_class(n: int, element_bytes: int, gpu) -> tuple:
    """What the forward planner (plans/tuned.py, plans/any_width.py) reads of a row's width: its power-of-two
    block, whether it is one, whether Triton sees it as a multiple of 16 and of a 16-byte vector, which row-byte
    thresholds it passes, and how many programs would share it on the split path."""
    import triton

    from softmax_core.plans import tuned

    vec = 16 // element_bytes
    row_bytes = n * element_bytes
    chunk = max(tuned.SPLIT_MIN_CHUNK, triton.next_power_of_2(triton.cdiv(n, tuned.MAX_SPLIT["forward"])))
    chunk = min(chunk, triton.next_power_of_2(n))
    return (triton.next_power_of_2(n), n == triton.next_power_of_2(n), n % 16 == 0, n % vec == 0, n % 4 == 0, n % 2 == 0,
            row_bytes >= tuned.TILED_FROM_ROW_BYTES, row_bytes >= tuned.EDGE_SPLIT_FORWARD_FROM_ROW_BYTES,
            row_bytes >= tuned.edge_split_forward_from_row_bytes(tuned.EDGE_SPLIT_FORWARD_FEW_ROWS,
                                                                 element_bytes),
            row_bytes >= tuned.split_from_row_bytes(element_bytes, gpu), chunk, triton.cdiv(n, chunk))


def class_widths(element_bytes: int, gpu, max_n: int = GPU_PAGE_MAX_N) -> tuple[int, ...]:
    """The smallest and the largest width of every n_class up to max_n."""
    first: dict = {}
    last: dict = {}
    for n in range(1, max_n + 1):
        key = n_class(n, element_bytes, gpu)
        first.setdefault(key, n)
        last[key] = n
    return tuple(sorted(set(first.values()) | set(last.values())))


def m_class_rows(gpu, max_m: int = GPU_PAGE_MAX_M) -> tuple[int, ...]:
    """One M for each number of rows per program the planner's fill rule allows (M // (2 x SMs) by its top bit:
    the tiny-rows kernel takes up to 2,048 rows a program, the others fewer), either side of the row count where
    the unaligned forward's split rule changes, and the boxes' ends."""
    from softmax_core.plans import tuned

    unit = tuned.PROGRAMS_PER_SM_TO_FILL * gpu.multiprocessor_count
    few = tuned.EDGE_SPLIT_FORWARD_FEW_ROWS                       # the unaligned forward's split rule changes past it
    rows = {1, defaults.CHAPTER_M, max_m} | {unit * 2 ** k for k in range(1, max_m.bit_length())
                                               if unit * 2 ** k <= max_m} | {m for m in (few, few + 1) if m <= max_m}
    return tuple(sorted(rows))


def class_configs(gpu) -> tuple[TunedConfig, ...]:
    """The GPU page's boxes, one configuration per (M class, N class, dtype), and the fixed ones."""
    from softmax_core.hardware import dtypes

    found = [TunedConfig(m, n, d) for d in page_dtypes()
             for n in class_widths(dtypes.element_size(dtypes.torch_dtype(d)), gpu) for m in m_class_rows(gpu)]
    return tuple(dict.fromkeys(found + list(fixed_configs())))


class _Unanswered(Exception):
    """A plan asked for a compile whose answer this walk has not chosen yet (tuned_jobs)."""


def _answers(gpu) -> dict:
    """Stand-in compile answers, the same for every kernel: True, a program fits with nothing spilled; False,
    registers spilled (the answer that sends a plan furthest: fewer rows, the split path, smaller tiles)."""
    from softmax_core.hardware.compile import KernelResources, RegisterSource

    return {True: KernelResources(16, 0, 0, RegisterSource.GIVEN, "", "", "stand-in"),
            False: KernelResources(255, 8, 0, RegisterSource.GIVEN, "", "", "stand-in")}


def reachable_jobs(config: TunedConfig, gpu) -> dict:
    """identity -> (spilled, job) for every compile the plan of `config` can ask for: the plan is run under every
    combination of answers to the compiles it asks for (a walk of its decision tree: each compile not yet
    answered is answered both ways in turn)."""
    from softmax_core.hardware.compile import answered_first, job_identity

    answers = _answers(gpu)
    jobs: dict = {}
    pending = [{}]
    while pending:
        chosen = pending.pop()

        def look(job, chosen=chosen):
            key = job_identity(job)
            spilled = sum(1 for fits in chosen.values() if not fits)
            if key not in jobs or jobs[key][0] > spilled:
                jobs[key] = (spilled, job)
            if key not in chosen:
                raise _Unanswered(key)
            return answers[chosen[key]]
        try:
            with answered_first(look):
                plan(config, gpu)
        except _Unanswered as missing:
            key = missing.args[0]
            pending += [{**chosen, key: True}, {**chosen, key: False}]
        except ValueError:      # a forced path that cannot run under these answers
            pass
    return jobs


def tuned_jobs(gpu, configs=None) -> list:
    """Every compile job a plan of `configs` (default class_configs) can ask for on `gpu`, whatever the
    compiles answer: those reached with the fewest spilled compiles on the way first (the likeliest), then by
    identity."""
    asked: dict = {}
    for config in configs if configs is not None else class_configs(gpu):
        for key, (spilled, job) in reachable_jobs(config, gpu).items():
            if key not in asked or asked[key][0] > spilled:
                asked[key] = (spilled, job)
    return [asked[k][1] for k in sorted(asked, key=lambda k: (asked[k][0], k))]
