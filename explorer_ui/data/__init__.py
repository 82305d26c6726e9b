"""Cached calls into softmax_core: the one place pages ask. softmax_core computes; Streamlit keeps the answers.

Compiles (for launch plans and PTX), traces (the interpreter replaying the kernel) and GPU probes are slow, so
each is cached: `st.cache_resource` for the live GPU (one shared object), `st.cache_data` for everything that
pickles. Arguments are plain keys (a GPU's catalog key, a dtype's name), so the caches hash cheaply. By what
they serve:
    kernels        the GPUs, launch plans and their facts, assembly, row traces (every page)
    chapter_notes  the chapter-notes page's compiles, interpreter runs and unit test
    chapter_benchmark  the recorded run of the chapter's Step 5 sweep
    long_rows      the long-rows pages' traces, plans and L2 tables
    recorded       the recorded benchmark runs and the figures drawn from them
Pages call them as `data.<name>`.
"""
from .chapter_benchmark import chapter_runs, chapter_sweep_frame  # noqa: F401
from .chapter_notes import (chapter_unit_test, exp_error, exp_ptx, grid_quirk, offline_resources,  # noqa: F401
                            stages_cost, stride_cases, warmup_resources, warps_table)
from .kernels import (DTYPE_NAMES, default_gpu_key, gpu_by_key, gpu_comparison, gpu_for_name,  # noqa: F401
                      gpu_keys, gpu_labeler, kernel_asm, launch_facts, launch_plan, live_gpu, local_launch_plan,
                      local_softmax_plan, recorded_first, recorded_resources, resources_of, softmax_plan,
                      toolchain_label,
                      store_footprint, trace, what_if_plan)
from .long_rows import (cliff_plans, exact_edge, online_trace, path_plans, split_trace,  # noqa: F401
                        traffic_table)
from .recorded import (FUSED_PROVIDERS, LIVE_RUN_KEY, RECORDED_DIR_ENV, benchmark_runs, chart_frame,  # noqa: F401
                       graph_run_for, measured_speedup, provider_label, recorded_dir, recorded_paths_cached,
                       recorded_runs, recorded_tuned, run_day, speedup_table)
