"""The glossary: which terms, where each one matters, its figure on a GPU, and links to its entry.

The words themselves live in locales/glossary.<lang>.toml (gloss_<term>_term / _def / _figure). Here is
what is not words: the order of the entries, the page each one points to (a key of
explorer_ui.pages_registry), and the figure, computed from a
GpuSpec and the chapter kernel's launch plan (never typed). Pages link a term's first use with
`FirstUse`: `g = FirstUse(); st.markdown(f"... {g('sm')} ...")`.
"""
from __future__ import annotations

import re

import softmax_core as sc
from softmax_core.hardware import runtime
from softmax_core.plans.tutorial import TUTORIAL_STAGES_SHARED_THRESHOLD
from softmax_teaching.launch_facts import facts_of_plan

from . import pages_registry, present
from .fmt import fmt_bytes
from .i18n import has, language, limits_said, say, t

GLOSSARY = "glossary"       # the glossary's own page (explorer_ui.pages_registry)
TERM_PARAM = "term"          # ?term=sm: the glossary shows that entry first

# (term, the page where it matters)
TERMS = (
    ("sm", "gpu"),
    ("warp", "gpu"),
    ("thread", "gpu"),
    ("program", "schedule"),
    ("grid", "schedule"),
    ("register", "gpu"),
    ("shared_memory", "gpu"),
    ("l2", "bench"),
    ("dram", "memory"),
    ("bandwidth", "bench"),
    ("occupancy", "gpu"),
    ("persistent", "schedule"),
    ("block_size", "padding"),
    ("num_warps", "chapter"),
    ("num_stages", "chapter"),
    ("mask", "padding"),
    ("fusion", "memory"),
    ("interpreter", "chapter"),
    ("stride", "chapter"),
    ("sector", "layouts"),
)
TERM_KEYS = tuple(term for term, _ in TERMS)


def anchor(term: str) -> str:
    return f"gloss-{term.replace('_', '-')}"


def page_of(term: str) -> pages_registry.Page:
    """The page where `term` matters."""
    return pages_registry.page(dict(TERMS)[term])


def link(term: str, text: str | None = None) -> str:
    """Markdown: `text` (default: the term's name) linking to its glossary entry, in the current language.
    The link is relative, so it works under any server base path."""
    if term not in TERM_KEYS:
        raise KeyError(f"no glossary term {term!r}; known: {', '.join(TERM_KEYS)}")
    label = text if text is not None else t(f"gloss_{term}_term")
    # The link opens a new tab (Streamlit's links do), a new session: it carries the language, presentation
    # mode, and the term, which the glossary shows first (the #anchor alone is lost when the page writes
    # its settings into the URL).
    shown = "&present=1" if present.is_on() else ""
    path = pages_registry.page(GLOSSARY).url_path
    return f"[{label}](./{path}?lang={language()}{shown}&{TERM_PARAM}={term}#{anchor(term)})"


def help_text(term: str) -> str:
    """The definition alone, for a widget's help tooltip."""
    return t(f"gloss_{term}_def")


class FirstUse:
    """Links a term the first time a page mentions it, plain text afterwards (one instance per page run)."""

    def __init__(self):
        self.seen: set[str] = set()

    def __call__(self, term: str, text: str | None = None) -> str:
        if term in self.seen:
            return text if text is not None else t(f"gloss_{term}_term")
        self.seen.add(term)
        return link(term, text)


# Spans of markdown a link must not go into: code, and links already there.
_PROTECTED = re.compile(r"`[^`]*`|\[[^\]]*\]\([^)]*\)")
_WORD = re.compile(r"[A-Za-z0-9_]")


def _matcher(term: str) -> re.Pattern:
    """The term's surface forms (gloss_<term>_match, a regex per language); ASCII forms match whole words."""
    pattern = t(f"gloss_{term}_match")
    return re.compile(f"(?<![A-Za-z0-9_])(?:{pattern})(?![A-Za-z0-9_])" if pattern.isascii() else f"(?:{pattern})")


# Streamlit's markdown reads ":name[text]" as a directive (its ":red[text]" colours): a colon followed by
# a word and then a link ("数字:内核的[寄存器](…)", Chinese puts no space after a colon) would swallow the
# link's text. A backslash before that colon keeps it a plain colon.
_DIRECTIVE_COLON = re.compile(r"(?<!\\):(?=[^\s:\[\]()`]*$)")


def _unshadow(before: str) -> str:
    return _DIRECTIVE_COLON.sub(r"\\:", before, count=1)


# A bold term that became a link, "多少**[寄存器](…)**": CommonMark opens bold only where `**` is not squeezed
# between a letter and punctuation, and Chinese has no space before it, so the stars showed as stars. Bold
# inside the link's text ("[**寄存器**](…)") reads the same and always parses.
_BOLD_LINK = re.compile(r"\*\*\[([^\]\n]+)\]\(([^)\s]+)\)\*\*")


def link_terms(text: str, first: FirstUse | None = None) -> str:
    """`text` with the first mention of each glossary term turned into a link to its entry (longer terms
    first, so "persistent programs" links to its own entry, not to "program"); code and links are left alone."""
    first = first or FirstUse()
    for term in sorted(TERM_KEYS, key=lambda k: -len(t(f"gloss_{k}_match"))):
        if term in first.seen:
            continue
        pattern = _matcher(term)
        pos = 0
        pieces = []
        for m in _PROTECTED.finditer(text):
            pieces.append((pos, m.start()))
            pos = m.end()
        pieces.append((pos, len(text)))
        for start, end in pieces:
            found = pattern.search(text, start, end)
            if found:
                before = _unshadow(text[:found.start()])
                text = before + first(term, found.group(0)) + text[found.end():]
                break
    return _BOLD_LINK.sub(r"[**\1**](\2)", text)


def _num(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


def figure_values(gpu: sc.GpuSpec, plan: sc.LaunchPlan | None, M: int, N: int) -> dict[str, dict]:
    """term -> the values its `_figure` sentence needs, for `gpu`; a term without a figure on this GPU (no
    L2 size in the catalog, no plan because the kernel does not compile) is left out."""
    traffic = sc.memory_traffic(M, N)
    values: dict[str, dict] = {
        "sm": {"sms": gpu.multiprocessor_count},
        "warp": {"warp": gpu.warp_size},
        "fusion": {"M": _num(M), "N": _num(N), "naive": fmt_bytes(traffic.naive_bytes),
                   "fused": fmt_bytes(traffic.fused_bytes), "speedup": f"{traffic.predicted_speedup:.2f}"},
        "stride": {"M": _num(M), "N": N},
        "interpreter": {},
    }
    if gpu.l2_mib:
        values["l2"] = {"l2": _num(gpu.l2_mib, 0 if gpu.l2_mib == int(gpu.l2_mib) else 1)}
        if gpu.infinity_cache_mib:      # AMD: each XCD's L2 serves its own CUs; the Infinity Cache serves them all
            values["l2"]["ic"] = _num(gpu.infinity_cache_mib)
    if gpu.memory_gb:
        values["dram"] = {"mem": _num(gpu.memory_gb, 0 if gpu.memory_gb == int(gpu.memory_gb) else 1)}
    if gpu.memory_bandwidth_gbps:
        moved = sc.bytes_moved(M, N, 4, "forward")
        values["bandwidth"] = {"bw": _num(gpu.memory_bandwidth_gbps), "M": _num(M), "N": _num(N),
                               "us": _num(moved / (gpu.memory_bandwidth_gbps * 1e9) * 1e6, 1)}
    if plan is not None:
        facts = facts_of_plan(plan)     # the GPU's programs per SM and limiter, as every page states them
        values.update({
            "thread": {"N": N, "threads": plan.num_warps * gpu.warp_size, "warps": plan.num_warps,
                       "warp": gpu.warp_size},
            "program": {"M": _num(M), "N": _num(N), "programs": _num(plan.num_programs)},
            "grid": {"grid": str(plan.grid)},
            "register": {"regs": _num(gpu.max_num_regs), "n_regs": plan.n_regs},
            "shared_memory": {"smem": _num(gpu.max_shared_mem), "shared": _num(plan.shared_bytes)},
            "occupancy": {"per_sm": facts.programs_per_sm, "N": _num(N), "limiter": limits_said(facts.limiters),
                          "chapter_per_sm": facts.chapter_programs_per_sm},
            "persistent": {"M": _num(M), "rows_per_program": _num(plan.rows_per_program, 1)},
            "block_size": {"N": _num(N), "block": _num(plan.block_size)},
            "num_warps": {"block": _num(plan.block_size), "warps": plan.num_warps},
            "num_stages": {"stages": plan.num_stages, "smem": _num(gpu.max_shared_mem),
                           "threshold": _num(TUTORIAL_STAGES_SHARED_THRESHOLD)},
            "mask": {"N": _num(N), "pad": _num(plan.block_size - N), "block": _num(plan.block_size)},
        })
    return values


def figure_text(term: str, values: dict[str, dict]) -> str | None:
    if term == "interpreter":
        return t("gloss_interpreter_figure_cpu") if runtime.INTERPRETED else t("gloss_interpreter_figure_gpu")
    if term not in values or not has(f"gloss_{term}_figure"):
        return None
    if term == "l2" and "ic" in values[term]:
        return t("gloss_l2_figure_infinity", **values[term])
    return t(f"gloss_{term}_figure", **values[term])

