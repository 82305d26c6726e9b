"""English sentences for plan reasons, for the command line and for error messages.

The app renders `PlanReason`s itself, per language; this is the library's own (English) renderer. Every
sentence is built from the reason's figures alone.
"""
from __future__ import annotations

from .reasons import PlanReason, ReasonCode

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
    ReasonCode.TOO_MANY_VALUES_PER_THREAD: ("even {threads} threads would each hold {values_per_thread} values of a "
                                            "{block_n:,}-value row; past {max_values_per_thread} a thread runs out "
                                            "of registers"),
    ReasonCode.ROW_OVER_SHARED_MEMORY: ("a row needs {row_shared_bytes:,} B of shared memory; this GPU has "
                                        "{max_shared_mem:,} B per SM"),
    ReasonCode.ROW_OVER_REGISTERS: ("a program holding the row needs {row_n_regs} registers x {threads} threads, "
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
        return (f"One program needs {v['shared_bytes']:,} B of shared memory for a row padded to "
                f"{v['block_size']:,} values, but {v['gpu']} offers {v['max_shared_mem']:,} B: not even one "
                f"program fits (Triton raises OutOfResources). The row must be processed in tiles.")
    if code is ReasonCode.TUTORIAL_OVER_REGISTERS:
        return (f"One program needs {v['n_regs']} registers x {v['threads']} threads, more than the "
                f"{v['max_num_regs']:,} registers of one SM: not even one program fits.")
    if code is ReasonCode.TUTORIAL_FITS:
        sram = ("it uses no shared memory, so shared memory sets no limit" if v["sram_occupancy"] is None
                else f"shared memory allows {v['sram_occupancy']} ({v['max_shared_mem']:,} B // "
                     f"{v['shared_bytes']:,} B)")
        return (f"Registers allow {v['reg_occupancy']} programs per SM; {sram}. So {v['programs_per_sm']} per "
                f"SM x {v['sms']} SMs; {_LIMITER[v['limiter']]}: {v['num_programs']:,} programs.")
    why = _WHY[reason.why].format(**v)
    if code is ReasonCode.ROWS:
        spilled = "nothing spilled" if v["n_spills"] == 0 else f"{v['n_spills']} spilled"
        return (f"{why[0].upper()}{why[1:]}: a row padded to {v['block_n']:,} values ({v['block_bytes']:,} B) "
                f"takes {v['n_regs']} registers per thread, {spilled}, {v['programs_per_sm']} program(s) per "
                f"SM. Each program holds {v['rows']} row(s), reads them once and writes them once.")
    if code is ReasonCode.TILED:
        if v["split_declined"]:
            why += ("; sharing the row between programs that run at once cannot take it here either (the "
                    "programs would spill registers, or more of them would have to run at once than fit)")
        return (f"{why[0].upper()}{why[1:]}, so the row is processed in tiles of {v['tile']:,} values "
                f"({v['n_tiles']} per row): pass 1 keeps a running max and sum, pass 2 writes the outputs, last "
                f"tile first so it is still in L2. One program per row; {v['programs_per_sm']} fit(s) on an "
                f"SM at a time.")
    if code is ReasonCode.SPLIT:
        publish, total, traffic = _EXCHANGE[v["direction"]]
        return (f"{why[0].upper()}{why[1:]}, so {v['split']} programs share each row, {v['chunk']:,} values "
                f"each ({v['n_regs']} registers per thread, {v['programs_per_sm']} program(s) per SM). Each "
                f"publishes {publish} and waits for the other {v['split'] - 1}; then all of them know {total} "
                f"and write their chunk: {traffic}. The grid is {v['groups']} groups x {v['split']} = "
                f"{v['num_programs']} programs, no more than run at once, since a program waiting for a peer "
                f"that never starts waits forever.")
    raise ValueError(f"{code.value} is not a plan's reason code")
