"""What a launch plan needs to know about a GPU, from the live device or from the catalog in assets/.

A `GpuSpec` is a plain value: pages and plans receive one, nothing here queries a device at import time.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from softmax_core.words.core import Code

# The catalog is package data: it is found beside the code, in a checkout and in an installed wheel alike.
CATALOG_PATH = Path(__file__).resolve().parents[1] / "data" / "gpus.json"
DEFAULT_GPU_KEY = "h200"  # plans made on a machine with no GPU target the H200 we benchmark on


@dataclass(frozen=True)
class GpuSpec:
    """The figures the seed's wrapper reads from `get_device_properties`, plus memory facts for charts."""

    key: str
    name: str
    vendor: str                      # "nvidia" or "amd": the occupancy rule and warp size differ
    arch: str                        # "sm_90", "gfx942", ...
    compute_capability: tuple[int, int]
    multiprocessor_count: int        # SMs (NVIDIA) or CUs (AMD)
    max_num_regs: int                # 32-bit registers per SM
    max_shared_mem: int              # bytes of shared memory one program may use
    warp_size: int                   # 32 on NVIDIA, 64 on AMD CDNA
    memory_bandwidth_gbps: float | None = None   # GB/s (decimal, as vendors quote it)
    memory_gb: float | None = None               # GB (decimal: the H200 has 141 GB = 131 GiB)
    l2_mib: float | None = None                  # MiB (binary: what the driver reports, in bytes / 2**20)
    infinity_cache_mib: float | None = None      # AMD: the Infinity Cache behind the XCDs' L2s, shared by every CU
    last_level_cache: str = "l2"                 # the last cache before DRAM, every SM's: one of CACHE_KINDS
    peak_fp32_tflops: float | None = None        # non-tensor FP32 rate, 10^12 flop/s (the vendor's figure)
    peak_bf16_tflops: float | None = None        # dense BF16 tensor-core (matrix-core) rate, 10^12 flop/s
    # What the occupancy rules need (softmax_core/hardware/occupancy.py), per architecture in softmax_core/data/gpus.json:
    max_warps_per_sm: int | None = None          # warp (wavefront) slots of one SM (CU)
    max_blocks_per_sm: int | None = None         # resident programs one SM allows (None: no such limit known)
    shared_mem_per_sm: int | None = None         # bytes of shared memory (LDS) the SM divides among programs
    reserved_shared_per_block: int = 0           # bytes the driver keeps per resident program
    shared_alloc_unit: int = 1                   # shared memory is handed out in multiples of this
    register_alloc_unit: int | None = None       # registers a warp is given at a time (NVIDIA 256)
    register_banks: int | None = None            # register file quarters: sub-partitions / SIMDs (4)
    max_regs_per_thread: int | None = None
    live: bool = False               # True when read from the device in this process
    source: dict = field(default_factory=dict, compare=False, hash=False, repr=False)  # figure -> its source

    @property
    def compile_target(self) -> tuple:
        """Arguments for `triton.backends.compiler.GPUTarget`: compile for this GPU without having it."""
        if self.vendor == "amd":
            return ("hip", self.arch, self.warp_size)
        major, minor = self.compute_capability
        return ("cuda", major * 10 + minor, self.warp_size)

    @property
    def label(self) -> str:
        return f"{self.name} ({'this machine' if self.live else 'catalog'})"


class CacheKind(Code):
    """The last cache before DRAM that every SM (CU) shares (GpuSpec.last_level_cache): its words are its name."""
    L2 = "l2"
    INFINITY_CACHE = "infinity_cache"
    LAST_LEVEL = "last_level"       # a sentence about no GPU in particular: "the last-level cache"


# what LastCache.kind and GpuSpec.last_level_cache can be: a cache a GPU has (not the sentence-only LAST_LEVEL)
CACHE_KINDS = (CacheKind.L2.value, CacheKind.INFINITY_CACHE.value)


@dataclass(frozen=True)
class LastCache:
    """The cache every SM (CU) shares in front of DRAM: what a re-read can hit instead of memory. On NVIDIA
    that is the L2. On AMD CDNA each XCD has its own small L2, shared only by that XCD's CUs, and the Infinity
    Cache behind them is the one all CUs share."""

    kind: str                         # "l2" or "infinity_cache"
    mib: float                        # as the vendor quotes it (their cache "MB" are MiB)

    @property
    def bytes(self) -> int:
        return int(self.mib * 2**20)


def last_cache(gpu: GpuSpec) -> LastCache | None:
    """The last cache before DRAM on `gpu` (the catalog's last_level_cache: the Infinity Cache on AMD CDNA 3/4,
    else the L2), or None when the catalog gives no size for it."""
    size = gpu.infinity_cache_mib if gpu.last_level_cache == "infinity_cache" else gpu.l2_mib
    return LastCache(gpu.last_level_cache, float(size)) if size else None


@lru_cache(maxsize=1)
def _catalog_document() -> dict:
    return json.loads(CATALOG_PATH.read_text())


def catalog_sources() -> dict[str, str]:
    """Source id -> full citation, for the figures in `gpu_catalog()`."""
    return dict(_catalog_document()["sources"])


def architecture_limits(arch: str) -> tuple[dict, dict]:
    """(figures, figure -> source id) of one architecture's per-SM limits, from the catalog's table."""
    table = _catalog_document()["architectures"]
    if arch not in table:
        raise ValueError(f"no architecture {arch!r} in softmax_core/data/gpus.json; known: {', '.join(table)}")
    entry = dict(table[arch])
    source = entry.pop("source")
    return entry, {fig: source[fig] if isinstance(source, dict) else source for fig in entry}


@lru_cache(maxsize=1)
def gpu_catalog() -> tuple[GpuSpec, ...]:
    """Every GPU kept as data in softmax_core/data/gpus.json, each figure with its source. A GPU takes its
    architecture's per-SM limits, unless its own entry states a figure (with its own source)."""
    sources = catalog_sources()
    specs = []
    for entry in _catalog_document()["gpus"]:
        limits, limit_sources = architecture_limits(entry["arch"])
        entry = {**limits, **entry}
        entry["compute_capability"] = tuple(entry["compute_capability"])
        entry["source"] = {fig: sources[src] for fig, src in {**limit_sources, **entry["source"]}.items()}
        if entry.get("last_level_cache", "l2") not in CACHE_KINDS:
            raise ValueError(f"{entry['key']}: last_level_cache must be one of {CACHE_KINDS}, "
                             f"not {entry['last_level_cache']!r} (softmax_core/data/gpus.json)")
        specs.append(GpuSpec(**entry))
    return tuple(specs)


def catalog_gpu(key: str = DEFAULT_GPU_KEY) -> GpuSpec:
    for spec in gpu_catalog():
        if spec.key == key:
            return spec
    known = ", ".join(s.key for s in gpu_catalog())
    raise ValueError(f"no GPU {key!r} in the catalog; known: {known}")


@lru_cache(maxsize=None)
def current_gpu(index: int = 0) -> GpuSpec | None:
    """The live GPU number `index`, read the way the seed does (triton's driver), or None without one."""
    import torch

    if not torch.cuda.is_available():
        return None
    count = torch.cuda.device_count()
    if not 0 <= index < count:
        raise ValueError(f"GPU index {index} is out of range: this machine has {count} GPU(s)")
    import triton

    props = triton.runtime.driver.active.utils.get_device_properties(index)
    torch_props = torch.cuda.get_device_properties(index)
    is_amd = torch.version.hip is not None
    arch = getattr(torch_props, "gcnArchName", "").split(":")[0] if is_amd else f"sm_{torch_props.major}{torch_props.minor}"
    bandwidth = None
    mem_clock, bus_width = props.get("mem_clock_rate"), props.get("mem_bus_width")
    if mem_clock and bus_width:  # kHz x bits; double data rate -> GB/s
        bandwidth = 2 * mem_clock * 1e3 * bus_width / 8 / 1e9
    l2 = getattr(torch_props, "L2_cache_size", None)
    driver = "triton.runtime.driver.active.utils.get_device_properties"
    torch_source = "torch.cuda.get_device_properties"
    try:
        limits, limit_sources = architecture_limits(arch)
        limit_sources = {fig: catalog_sources()[src] for fig, src in limit_sources.items()}
    except ValueError:  # an architecture the catalog does not know: no hardware occupancy rule
        limits, limit_sources = {}, {}
    for figure in ("max_num_regs", "max_shared_mem", "warp_size"):   # the driver's own figures, read below
        limits.pop(figure, None)
        limit_sources.pop(figure, None)
    # Where the device reports a limit itself, its own figure wins over the catalog's.
    threads = getattr(torch_props, "max_threads_per_multi_processor", None)
    if threads:
        limits["max_warps_per_sm"] = threads // int(props["warpSize"])
        limit_sources["max_warps_per_sm"] = f"{torch_source} (max_threads_per_multi_processor // warp size)"
    smem = getattr(torch_props, "shared_memory_per_multiprocessor", None)
    if smem and not is_amd:
        limits["shared_mem_per_sm"] = int(smem)
        limit_sources["shared_mem_per_sm"] = f"{torch_source} (shared_memory_per_multiprocessor)"
    # No driver query reports AMD's Infinity Cache: take it from a catalog GPU of the same architecture.
    same_arch = [g for g in gpu_catalog() if is_amd and g.arch == arch and g.infinity_cache_mib]
    if same_arch:
        limits["infinity_cache_mib"] = same_arch[0].infinity_cache_mib
        limit_sources["infinity_cache_mib"] = f"{same_arch[0].source['infinity_cache_mib']} (catalog, same architecture)"
        limits["last_level_cache"] = same_arch[0].last_level_cache
        limit_sources["last_level_cache"] = f"{same_arch[0].source['last_level_cache']} (catalog, same architecture)"
    return GpuSpec(
        key=f"live-{index}",
        name=torch_props.name,
        vendor="amd" if is_amd else "nvidia",
        arch=arch,
        compute_capability=(torch_props.major, torch_props.minor),
        multiprocessor_count=int(props["multiprocessor_count"]),
        max_num_regs=int(props["max_num_regs"]),
        max_shared_mem=int(props["max_shared_mem"]),
        warp_size=int(props["warpSize"]),
        memory_bandwidth_gbps=bandwidth,
        memory_gb=torch_props.total_memory / 1e9,
        l2_mib=l2 / 2**20 if l2 else None,
        live=True,
        **limits,
        source={"multiprocessor_count": driver, "max_num_regs": driver, "max_shared_mem": driver,
                "warp_size": driver, "memory_bandwidth_gbps": f"{driver} (2 x memory clock x bus width)",
                "memory_gb": f"{torch_source} (total_memory, usable by programs)", "l2_mib": torch_source,
                **limit_sources},
    )


def default_gpu(index: int = 0) -> GpuSpec:
    """The live GPU when there is one, else the catalog's H200."""
    return current_gpu(index) or catalog_gpu(DEFAULT_GPU_KEY)
