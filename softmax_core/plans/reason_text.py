"""English sentences for plan reasons, for the command line and for error messages.

The app renders `PlanReason`s itself, per language; this is the library's own (English) renderer. Every
sentence is built from the reason's figures alone.
"""
from __future__ import annotations

import string

from softmax_core.plans.reasons import PlanReason, ReasonCode


class _Counted(string.Formatter):
    """str.format plus counted nouns: `{n:,|program|programs}` gives "1 program" or "1,024 programs"."""

    def format_field(self, value, format_spec: str) -> str:
        if "|" not in format_spec:
            return super().format_field(value, format_spec)
        spec, one, other = format_spec.split("|")
        return f"{format(value, spec)} {one if value == 1 else other}"


_COUNTED = _Counted()


def format_counted(text: str, **values) -> str:
    """`text.format(**values)`, where a placeholder may end in `|singular|plural` to name its count's noun.
    The app's translations (explorer_ui.i18n) use the same rule."""
    return _COUNTED.format(text, **values) if "|" in text else text.format(**values)

_LIMITER = {"rows": "there are fewer rows than program slots, so every row gets its own program",
            "registers": "registers run out first", "shared memory": "shared memory runs out first"}

_EXCHANGE = {"forward": ("its chunk's (max, sum)", "the row's (max, sum)", "x is read once and y written once"),
             "backward": ("its chunk's share of sum(y * dy)", "the whole sum",
                          "y and dy are read once and dx written once")}


# Why the tuned plan took (or left) the whole-row path, as a clause; placeholders are the why code's figures.
_WHY = {
    ReasonCode.FITS_IN_REGISTERS: "a whole row fits in registers",
    ReasonCode.FORCED: "the caller chose this path",
    ReasonCode.READ_TWICE_FASTER: ("a float32 row of {row_bytes:,} B runs faster read twice (the second time from "
                                   "L2) than held whole in registers (measured on the H200, docs/performance.md)"),
    ReasonCode.TOO_MANY_VALUES_PER_THREAD: ("even {threads:|thread|threads} would each hold {values_per_thread:|value|values} of a "
                                            "{block_n:,}-value row; past {max_values_per_thread} a thread runs out "
                                            "of registers"),
    ReasonCode.ROW_OVER_SHARED_MEMORY: ("a row needs {row_shared_bytes:,} B of shared memory; this GPU has "
                                        "{max_shared_mem:,} B per SM"),
    ReasonCode.ROW_OVER_REGISTERS: ("a program holding the row needs {row_n_regs:|register|registers} x {threads:|thread|threads}, "
                                    "more than the {max_num_regs:,} of one SM"),
    ReasonCode.ROW_SPILLS: ("holding a {block_n:,}-value row needs more registers than a thread has: the compiler "
                            "spilled {row_n_spills} of them to slow local memory"),
    ReasonCode.ROW_PAST_L2: ("a {row_bytes:,} B row is long enough that, with a row per program in flight on every "
                             "SM, a second pass would no longer find it in L2"),
}


def describe(reason: PlanReason) -> str:
    """The reason as English sentences."""
    code, v = reason.code, reason.values
    if code is ReasonCode.TUTORIAL_OVER_SHARED_MEMORY:
        return format_counted("One program needs {shared_bytes:,} B of shared memory for a row padded to "
                              "{block_size:,|value|values}, but {gpu} offers {max_shared_mem:,} B: not even one "
                              "program fits (Triton raises OutOfResources). The row must be processed in tiles.", **v)
    if code is ReasonCode.TUTORIAL_OVER_REGISTERS:
        return format_counted("One program needs {n_regs:|register|registers} x {threads:|thread|threads}, more "
                              "than the {max_num_regs:,|register|registers} of one SM: not even one program fits.",
                              **v)
    if code is ReasonCode.TUTORIAL_FITS:
        sram = ("it uses no shared memory, so shared memory sets no limit" if v["sram_occupancy"] is None
                else f"shared memory allows {v['sram_occupancy']} ({v['max_shared_mem']:,} B // "
                     f"{v['shared_bytes']:,} B)")
        return format_counted("By the chapter's formula, registers allow {reg_occupancy:|program|programs} per SM; {sram}. So "
                              "{programs_per_sm} per SM x {sms:|SM|SMs}; {limiter_why}: "
                              "{num_programs:,|program|programs}.", **v, sram=sram, limiter_why=_LIMITER[v["limiter"]])
    why = format_counted(_WHY[reason.why], **v)
    if code is ReasonCode.ROWS:
        spilled = "nothing spilled" if v["n_spills"] == 0 else f"{v['n_spills']} spilled"
        return format_counted("{Why}: a row padded to {block_n:,|value|values} ({block_bytes:,} B) takes "
                              "{n_regs:|register|registers} per thread, {spilled}, {programs_per_sm:|program|programs} "
                              "per SM. Each program holds {rows:|row|rows}, reads them once and writes them once.",
                              **v, Why=why[0].upper() + why[1:], spilled=spilled)
    if code is ReasonCode.TILED:
        if v["split_declined"]:
            why += ("; sharing the row between programs that run at once cannot take it here either (the "
                    "programs would spill registers, or more of them would have to run at once than fit)")
        per_row = ("One program per row" if v["shared_by"] == 1 else format_counted(
            "Each row is shared by {shared_by} programs that run at once, each walking its own span of tiles, so "
            "fewer rows are in flight and pass 2 finds its span still in L2; they meet once per row, as the split "
            "path's programs do", **v))
        return format_counted("{Why}, so the row is processed in tiles of {tile:,|value|values} ({n_tiles} per "
                              "row): pass 1 keeps a running max and sum, pass 2 writes the outputs, last tile first "
                              "so it is still in L2. {per_row}; {programs_per_sm:|program fits|programs fit} "
                              "on an SM at a time.", **v, Why=why[0].upper() + why[1:], per_row=per_row)
    if code is ReasonCode.SPLIT:
        publish, total, traffic = _EXCHANGE[v["direction"]]
        return format_counted("{Why}, so {split:|program|programs} share each row, {chunk:,|value|values} each "
                              "({n_regs:|register|registers} per thread, {programs_per_sm:|program|programs} per "
                              "SM). Each publishes {publish} and waits for the other {others}; then all of them know "
                              "{total} and write their chunk: {traffic}. The grid is {groups} groups x {split} = "
                              "{num_programs:|program|programs}, no more than run at once, since a program waiting "
                              "for a peer that never starts waits forever.", **v, Why=why[0].upper() + why[1:],
                              publish=publish, total=total, traffic=traffic, others=v["split"] - 1)
    raise ValueError(f"{code.value} is not a plan's reason code")
