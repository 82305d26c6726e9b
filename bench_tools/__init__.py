"""Tools that record what the app and the docs show, on top of softmax_bench. Run from the repository root
with `python -m`; the ones that time or ask a GPU need one (each says so and exits on a machine without).

doc_tables              docs/performance.md's tables, generated from the records in assets/benchmarks/
tune                    a tuning sweep: kernel variants (kernel + constexprs + grid, not plans), checked and
                        timed by the harness beside copy and the library's providers
record.gpu_compare      registers, shared memory and programs per SM of both kernels on every catalog GPU,
                        compiled offline (any machine): assets/occupancy/compare-triton-<version>.*
record.driver_occupancy the CUDA driver's own occupancy answer for the compiled kernels (a GPU):
                        assets/occupancy/<gpu>-driver-occupancy.*
record.launch_cost      the host's microseconds per call on small matrices (a GPU)
record.ncu_workloads    the launches Nsight Compute profiles (a GPU): assets/benchmarks/profiles/
models_table            docs/performance.md's "Real shapes" table, from assets/benchmarks/models/
shapes_tune             issue 21's tuning sweep of the any-dim, any-width and tiny-row kernels (a GPU):
                        assets/benchmarks/tuning/h200-shapes-tune-*
class_sweep             random shapes drawn per class of layout (a seed), checked, timed beside copy, torch and
                        torch.compile, forward and backward (a GPU): assets/benchmarks/classes/
shapes_check            the odd widths the any-width kernel took over, before and after (a GPU)

The benchmark sweeps themselves (the tutorial's, the full record) are `python -m softmax_core --benchmark`.
"""
