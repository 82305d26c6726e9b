"""Pre-warm: on a server's first page run, compile in the background what the pages will ask for.

Launch plans read registers and shared memory from the real compiled kernel (softmax_core.hardware.compile), and
the results are cached on disk. On a fresh machine nothing is cached yet, so a page's first visit would wait
for compiles (docs/classroom.md has the measured waits); compiling once, before a student asks, turns each
wait into a disk read.

The work runs in a process of its own (`python -m explorer_ui.prewarm`), at the lowest CPU priority:
- it shares nothing with the server's sessions: not the interpreter lock, not the server's offline-compiler
  child, so a student's own request never queues behind it (a compile it has not reached yet is simply
  done twice, and both write the same file);
- at nice 19 it gets the CPU only when the server and the browsers leave some, so it does not slow the
  page being rendered;
- it exits when done: a few seconds of imports when the disk cache is already warm.

Before that child starts, the server copies into the disk cache the compile results shipped with the app
(assets/compile_seed/, written by `python -m explorer_ui.prewarm --write-seed` with its provenance beside
them): on a fresh clone the story pages' first visits then find their plans at once instead of waiting for the
child (a page that needs a plan before the child has made it starts a compiler of its own: 8-12 s on a loaded
2-core laptop). A shipped result is only ever read under its own cache key, which holds the triton and ptxas
versions and the kernel's source: a different toolchain or an edited kernel simply misses it and compiles.

SOFTMAX_EXPLORER_PREWARM=0 turns both off (the test suite does, see tests/conftest.py). This module imports
nothing heavy at the top: the server imports it on every page, the child imports it before anything else.
"""
from __future__ import annotations

import argparse
import atexit
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from . import defaults

ENV = "SOFTMAX_EXPLORER_PREWARM"
ROOT = Path(__file__).resolve().parent.parent
LOG_NAME = "prewarm.log"
SEED_NAME = "compile_seed"         # under the assets folder (softmax_core.data.assets_dir)
PROVENANCE_NAME = "provenance.json"

_lock = threading.Lock()
_started = False
_process: subprocess.Popen | None = None


def enabled() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def start_once() -> subprocess.Popen | None:
    """Start the pre-warm the first time any page runs in this server process; later calls do nothing.
    Every session runs pages in its own thread, hence the lock."""
    global _started, _process
    if _started or not enabled():
        return _process
    with _lock:
        if not _started:
            _started = True
            try:
                plant_seed()
                _process = launch()
            except OSError:      # no pre-warm is only slower, never broken
                _process = None
    return _process


# -- the server's side, after its first page: what the next pages import, and the first chart ----------------
_imports_started = False


def import_pages_soon() -> threading.Thread | None:
    """After the server's first page has been drawn, once per process: a background thread runs every page's
    top-level import statements, in the story's order, then builds one chart and one code panel, so that the
    first visit of a page with charts does not pay altair's import and its schema validator's first build
    (1 s and more on 2 cores), nor Pygments' first highlight; then compiles the default plan's PTX/SASS. It imports exactly what the pages themselves
    import, in their own words, as one more student opening them would (tests/serve/test_concurrent_imports.py
    races them); a page opened meanwhile simply waits for a module being imported, as it would for another
    session. Off with the pre-warm (SOFTMAX_EXPLORER_PREWARM=0)."""
    global _imports_started
    if _imports_started or not enabled():
        return None
    with _lock:
        if _imports_started:
            return None
        _imports_started = True
    thread = threading.Thread(target=import_pages, name="prewarm-imports", daemon=True)
    thread.start()
    return thread


def page_import_blocks() -> list[tuple[str, str]]:
    """(script, its top-level import statements) for every page of the registry, in the story's order."""
    import ast

    from . import pages_registry

    blocks = []
    for page in pages_registry.PAGES:
        if not page.exists():
            continue
        tree = ast.parse((pages_registry.APP_DIR / page.script).read_text())
        imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
        blocks.append((page.script, "\n".join(ast.unparse(node) for node in imports)))
    return blocks


def import_pages() -> None:
    """What import_pages_soon's thread runs (in this thread when called directly)."""
    for script, block in page_import_blocks():
        try:
            exec(compile(block, f"<imports of {script}>", "exec"), {"__name__": "prewarm_imports"})
        except Exception:      # the page itself will say what is wrong; a warm-up never breaks anything
            pass
    try:
        import altair as alt
        import pandas as pd

        from .code import code_html

        alt.Chart(pd.DataFrame({"x": [0, 1]})).mark_bar().encode(x="x:Q", y="x:Q", color="x:N").to_dict()
        code_html(("x = 1",), (1,), None, None, None)
    except Exception:
        pass
    try:
        # The one compile the story pages need at their defaults that the shipped seed leaves out (see
        # write_seed); under the interpreter it also starts the server's compiler process, so a student's
        # first compile of something new (another GPU, another N) does not wait for its start (~3 s) too.
        import softmax_core as sc

        plan_asm(sc.default_gpu())
    except Exception:
        pass


def seed_dir() -> Path:
    from softmax_core.data import assets_dir

    return assets_dir() / SEED_NAME


def plant_seed(source: Path | None = None, cache: Path | None = None) -> int:
    """Copy the shipped compile results (`source`, default seed_dir()) that the disk cache (`cache`, default
    the compile cache) lacks into it; returns how many. A file already there is never replaced."""
    from softmax_core.hardware.compile import cache_dir

    source = source or seed_dir()
    if not source.is_dir():
        return 0
    cache = cache or cache_dir()
    planted = 0
    for path in sorted(source.glob("*.json")):
        target = cache / path.name
        if path.name == PROVENANCE_NAME or target.exists():
            continue
        tmp = target.with_name(f"{target.name}.{os.getpid()}.seed.tmp")
        shutil.copyfile(path, tmp)
        tmp.replace(target)           # whole or absent: a page reading it meanwhile sees no torn file
        planted += 1
    return planted


def forget_start() -> None:
    """Forget that this server process started its pre-warm and its imports, as a fresh process would (tests)."""
    global _started, _process, _imports_started
    with _lock:
        _started, _process, _imports_started = False, None, False


def log_path() -> Path:
    from softmax_core.hardware.compile import cache_dir

    return cache_dir().parent / LOG_NAME


def launch(defaults_only: bool = False) -> subprocess.Popen:
    """Start `python -m explorer_ui.prewarm` (its report goes to prewarm.log beside the compile cache)."""
    from softmax_core.hardware import runtime

    env = dict(os.environ)
    if runtime.INTERPRETED:
        # Compile in that process directly, like the offline-compiler child: no interpreter there.
        env.pop("TRITON_INTERPRET", None)
        env[runtime.OFFLINE_COMPILER_ENV] = "1"
    command = [sys.executable, "-m", "explorer_ui.prewarm"] + (["--defaults-only"] if defaults_only else [])
    with open(log_path(), "w") as log:
        proc = subprocess.Popen(command, cwd=str(ROOT), env=env, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT)
    atexit.register(_stop, proc)      # a server that exits first takes its pre-warm with it
    return proc


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()


# -- the child's side ------------------------------------------------------------------------------------


def plan_asm(gpu) -> dict:
    """The PTX/SASS (or AMDGCN) of the chapter's M x N plan on `gpu`: the GPU page shows it after a click, the
    chapter notes read the exponential's instructions out of it at their defaults."""
    import softmax_core as sc
    from softmax_core.hardware import dtypes
    from softmax_core.hardware.compile import kernel_resources
    from softmax_core.plans.tutorial import tutorial_compile_job

    dtype = dtypes.torch_dtype(defaults.DTYPE)
    p = sc.plan_launch(defaults.CHAPTER_M, defaults.CHAPTER_N, dtype, gpu)
    job = tutorial_compile_job(p.block_size, p.num_warps, p.num_stages, dtype, gpu)
    return kernel_resources(job, want_asm=True).asm


def work_items(defaults_only: bool = False) -> list[tuple[str, object]]:
    """(what, call) in the order a class needs them: each story page's defaults first, in the story's order,
    then what those pages compute after a click (the compiled code, the GPU page's longest row), then the same for every GPU of the catalog, so that switching the GPU is quick too.

    With a GPU in the machine the pages start on it, and their plans compile and load the kernel there
    (CompileJob.on_device); some pages still compile offline for that GPU's architecture (the chapter notes,
    to compare the two ways) or for a catalog GPU (the long-rows page's recorded H200): both are here too."""
    import softmax_core as sc
    from softmax_core.hardware import dtypes
    from softmax_teaching import chapter_notes as sc_chapter
    from softmax_teaching import long_row_trace as lrt
    from softmax_core.hardware.compile import kernel_resources
    from softmax_core.plans.tutorial import tutorial_compile_job

    dtype = dtypes.torch_dtype(defaults.DTYPE)
    M, N = defaults.CHAPTER_M, defaults.CHAPTER_N
    live = sc.current_gpu(0)
    home = sc.default_gpu()
    schedule_gpu = home

    def plan(n_cols: int, gpu):
        return lambda: sc.plan_launch(M, n_cols, dtype, gpu)

    def tuned(gpu, n_cols: int = N):
        return lambda: sc.plan_softmax(M, n_cols, dtype, gpu)

    top = defaults.GPU_PAGE_MAX_N     # the GPU page's longest row: the slowest first compile of all

    # First what each story page computes at its defaults, in the story's order (a class opens them in that
    # order, so each first visit finds its plans ready); then what a page needs only after a click (the
    # compiled code, the padding chain's short rows, the GPU page's longest row: the slowest compile of all,
    # behind every page's defaults).
    from softmax_bench.models import MODEL_CASES
    from softmax_core.plans.shapes import plan_shape
    first = MODEL_CASES[0]      # the Benchmark page's "Your shape" starts on it (GPT-2's logits), forward
    items = [(f"plan {M}x{N} on {home.key} (padding chain, GPU page)", plan(N, home)),
             (f"plan {M}x{defaults.SCHEDULE_N} on {schedule_gpu.key} (row schedule)",
              plan(defaults.SCHEDULE_N, schedule_gpu)),
             (f"tuned plan {M}x{N} on {home.key} (GPU page)", tuned(home)),
             (f"plan for {first.name} on {home.key} (benchmark page, your shape)",
              lambda: plan_shape(first.shape, first.dtype, first.dim, home, transposed=first.transposed))]
    items.append((f"loads recorded and compiled for the layouts page's defaults on {home.key} and the ncu "
                  f"record's H200 (layouts page)", lambda: layouts_traces(home.key)))
    # the GPU page's "vary BLOCK_SIZE" (after a click) and the long-rows page's cliff (at its defaults)
    items += [(f"plan {M}x{b} on {home.key} (BLOCK_SIZE sweep, long-rows cliff)", plan(b, home)) for b in defaults.BLOCK_SWEEP]
    items += [(f"tuned plan {M}x{n} on {home.key} (long-rows path map)", (lambda n=n: sc.plan_softmax(M, n, dtype, home)))
              for n in defaults.LONG_ROWS_NS]
    # the long-rows page's L2 chart, on its GPU and on the one its recorded sweep ran on (the same without a GPU)
    for gpu in dict.fromkeys((home, sc.catalog_gpu(defaults.LONG_ROWS_RECORDED_GPU))):
        items.append((f"tiled traffic for N >= {defaults.LONG_ROWS_L2_NS[0]} on {gpu.key} (long rows, L2 chart)",
                      lambda gpu=gpu: [lrt.tiled_traffic(M, n, dtype, gpu) for n in defaults.LONG_ROWS_L2_NS]))
    items += [(f"offline compile at N={N} for {home.key} (chapter notes, beside the live warmup)",
               lambda: sc_chapter.offline_resources(N, dtype, home)),
              (f"num_stages 1-4 at N={N} on {home.key} (chapter notes)", lambda: sc_chapter.stages_cost(N, dtype, home)),
              (f"plans for the {sc_chapter.STRIDE_DEMO} stride demo (chapter notes)",
               lambda: (sc.plan_launch(*sc_chapter.STRIDE_DEMO, dtype, home),
                        sc.plan_softmax(*sc_chapter.STRIDE_DEMO, dtype, home))),
              # offline even where home is this machine's GPU, so not the BLOCK_SIZE sweep's plans there
              (f"num_warps table, offline compiles for {home.key} (chapter notes)",
               lambda: sc_chapter.num_warps_cost(defaults.BLOCK_SWEEP, dtype, home))]
    # after a click
    items.append((f"PTX/SASS of the {M}x{N} plan on {home.key} (GPU page, chapter notes)", lambda: plan_asm(home)))
    # the padding chain's shortest rows (N < 32) have block sizes below the sweep's
    items += [(f"plan {M}x{b} on {home.key} (padding chain, short rows)", plan(b, home))
              for b in defaults.SHORT_BLOCKS]
    items += [(f"plan {M}x{top} on {home.key} (GPU page, longest row)", plan(top, home)),
              (f"tuned plan {M}x{top} on {home.key} (GPU page, longest row)", tuned(home, top))]
    if defaults_only:
        return items
    others = [g for g in sc.gpu_catalog() if g != home]
    for gpu in others:
        items += [(f"plan {M}x{N} on {gpu.key}", plan(N, gpu)), (f"tuned plan {M}x{N} on {gpu.key}", tuned(gpu)),
                  (f"plan {M}x{defaults.SCHEDULE_N} on {gpu.key}", plan(defaults.SCHEDULE_N, gpu)),
                  (f"plan {M}x{top} on {gpu.key} (longest row)", plan(top, gpu)),
                  (f"tuned plan {M}x{top} on {gpu.key} (longest row)", tuned(gpu, top))]
    for gpu in others:
        items += [(f"plan {M}x{b} on {gpu.key} (BLOCK_SIZE sweep)", plan(b, gpu)) for b in defaults.BLOCK_SWEEP]
    items += [(f"loads for the layouts page's defaults on {gpu.key}", lambda gpu=gpu: layouts_traces(gpu.key))
              for gpu in others]
    return items


def layouts_traces(gpu_key: str) -> None:
    """The layouts page's traces at its defaults with `gpu_key` chosen (transactions_view.default_requests):
    each program's loads recorded in Triton's interpreter (in a child process of its own here: this one
    compiles) and read from the kernel compiled for the GPU, into the disk caches the page reads."""
    from explorer_ui import data
    from explorer_ui import transactions_view as tv

    for cases, key in tv.default_requests(gpu_key):
        tv.kernel_traces(list(cases), data.gpu_by_key(key))


def run_items(items: list[tuple[str, object]]) -> list[tuple[str, float, str]]:
    """Run each item, printing one line per item; returns (what, seconds, status) for each."""
    done = []
    for what, call in items:
        t0 = time.perf_counter()
        try:
            call()
            status = "ok"
        except Exception as exc:   # a plan that cannot compile here is its page's to explain, not ours
            status = f"failed: {type(exc).__name__}: {exc}"
        done.append((what, time.perf_counter() - t0, status))
        print(f"{done[-1][1]:6.2f} s  {what}: {status}", flush=True)
    return done


def write_seed(dest: Path | None = None) -> Path:
    """Compile every work item into an empty cache of its own, then ship its results in `dest` (default
    seed_dir()), replacing the old ones, with provenance.json: the command, the versions, the machine and each
    item's outcome and time. PTX/SASS texts stay out: they name the source file by the path it had where it
    was compiled, and a class's copy shows its own (the pre-warm makes them there, right after the defaults)."""
    import tempfile

    import torch
    import triton

    import softmax_core as sc
    from softmax_core.hardware.compile import cache_dir, toolchain

    if sc.current_gpu(0) is not None:
        raise SystemExit("a GPU is here: its pages compile on it (on_device), which a seed for laptops must not hold")
    dest = dest or seed_dir()
    with tempfile.TemporaryDirectory(prefix="compile-seed-") as tmp:
        os.environ["SOFTMAX_EXPLORER_CACHE"] = tmp
        started = time.perf_counter()
        done = run_items(work_items())
        results = sorted(p for p in cache_dir().glob("*.json") if not p.name.endswith("-asm.json"))
        dest.mkdir(parents=True, exist_ok=True)
        for old in dest.glob("*.json"):
            old.unlink()
        for path in results:
            shutil.copyfile(path, dest / path.name)
        home = sc.default_gpu()
        provenance = {
            "what": "compile results (registers, spills, shared memory; the layouts page's loads as read from the "
                    "TTGIR and assembly) of explorer_ui.prewarm.work_items(), "
                    "copied into an empty compile cache by explorer_ui.prewarm.plant_seed at a server's start",
            "command": "python -m explorer_ui.prewarm --write-seed",
            "written_utc": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "versions": {"python": platform.python_version(), "torch": torch.__version__,
                         "triton": triton.__version__},
            "toolchain_of_default_gpu": toolchain(tuple(home.compile_target)),
            "machine": f"{os.cpu_count()} CPU cores, no GPU, {platform.system()} {platform.machine()}",
            "files": len(results),
            "seconds": round(time.perf_counter() - started, 1),
            "items": [{"what": what, "seconds": round(seconds, 2), "status": status} for what, seconds, status in done],
        }
        (dest / PROVENANCE_NAME).write_text(json.dumps(provenance, indent=1) + "\n")
    print(f"wrote {len(results)} compile results and {PROVENANCE_NAME} to {dest}", flush=True)
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Compile what the explorer's pages ask for into the disk cache.")
    ap.add_argument("--defaults-only", action="store_true", help="only each page's defaults, not every GPU")
    ap.add_argument("--write-seed", action="store_true",
                    help=f"compile everything into an empty cache and ship the results in assets/{SEED_NAME}/")
    args = ap.parse_args(argv)
    try:
        os.nice(19)               # first, before the imports: they are most of a warm run's work
    except (AttributeError, OSError):
        pass
    if args.write_seed:
        write_seed()
        return 0
    started = time.perf_counter()
    done = run_items(work_items(args.defaults_only))
    failed = sum(1 for _, _, status in done if status != "ok")
    print(f"{len(done) - failed} of {len(done)} done in {time.perf_counter() - started:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
