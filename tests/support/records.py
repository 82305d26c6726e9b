"""Small recorded benchmark runs, written by the tests for the benchmark page to show."""
import pandas as pd


def write_record(directory, stem: str, timer: str, date: str, ms: float) -> None:
    """A small recorded run of the chapter's dtype with QuACK among its providers, timed by `timer`."""
    import softmax_bench as bench

    clock = bench.CudaGraphTimer() if timer == bench.DO_BENCH_CUDAGRAPH else bench.DoBenchTimer()
    rows = []
    for n in (1024, 4096):
        for provider, factor in (("copy", 1.0), ("tuned", 1.1), ("torch", 1.5), ("quack", 1.05), ("naive", 4.0)):
            t = ms * factor * n / 1024
            rows.append(dict(provider=provider, direction="forward", dtype="float32", M=4096, N=n, ms_p20=t,
                             ms_median=t, ms_p80=t, ms_min=t, ms_max=t,
                             gbps=bench.gbps(2 * 4096 * n * 4, t), copy_ratio=1.0 / factor, status="ok", reason=""))
    provenance = {"gpu": "Test GPU 9000", "date": date, "torch": "x", "triton": "y", "M": 4096, "dtype": "float32",
                  "command": f"made by the tests ({timer})", "record_version": bench.RECORD_VERSION, "timer": timer,
                  "timer_figures": bench.timer_figures(clock), "quack_kernels": "0.6.5",
                  "nvidia_cutlass_dsl": "4.3.0", "providers": ["copy", "quack"]}
    bench.save_run(bench.BenchmarkRun(pd.DataFrame(rows, columns=bench.COLUMNS), provenance), directory, stem)
