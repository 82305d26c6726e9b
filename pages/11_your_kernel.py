"""Your kernel: paste a Triton kernel, see what every GPU makes of it (registers, spills, shared memory,
programs per SM by the hardware's rules and the chapter's formula, the limiter, a what-if, the floors, the
PTX/SASS with source lines linked) and, where the teacher allows running pasted code and a GPU is present,
measure it in the sandbox."""
import explorer_ui.startup  # noqa: F401  first: one session imports the project while the others wait
import json

import streamlit as st
import torch

from explorer_ui import data, heavy_work, layout, urlstate, your_kernel as yk, your_kernel_record
from explorer_ui.i18n import t
from kernel_inspector import argspec, examples, gate, inspect as ki, interpret, measure, record, sandbox, share

WARPS = (1, 2, 4, 8, 16, 32)
DEFAULT_GPUS = ["h200", "a100-80gb", "mi300x"]

layout.setup_page("your_kernel")
layout.intro("your_kernel")
yk.code_boxes_style()


def example_state(name: str, small: bool = False) -> dict:
    """An example's page state: its sizes for the floors, or (small) the interpreter's small sizes."""
    sizes = examples.SMALL[name] if small else examples.SIZES[name]
    args = examples.SMALL[name]["args"] if small else examples.ARGUMENTS[name]
    return {"source": examples.EXAMPLES[name], "args": "\n".join(args),
            "sizes": "\n".join(f"{k}={'x'.join(map(str, v))}" for k, v in sizes["sizes"].items()),
            "grid": "x".join(map(str, sizes["grid"])), "flops": float(examples.SIZES[name]["flops"] or 0)}


def load(state: dict) -> None:
    for key in ("source", "args", "sizes", "grid"):
        st.session_state[f"yk_{key}"] = str(state.get(key, ""))
    st.session_state["yk_flops"] = float(state.get("flops") or 0)


if "yk_source" not in st.session_state:
    shared = share.decode_state(urlstate.url_value("k") or "") if urlstate.in_url("k") else None
    load(shared or example_state("softmax"))
    if urlstate.in_url("k") and shared is None:
        st.warning(t("yk_bad_link"))


EXAMPLE_LABELS = {t("yk_ex_softmax"): "softmax", t("yk_ex_vector_add"): "vector_add",
                  t("yk_ex_layer_norm"): "layer_norm", t("yk_ex_matmul"): "matmul"}


def on_example() -> None:
    load(example_state(EXAMPLE_LABELS.get(st.session_state["yk_example"], "softmax")))


st.selectbox(t("yk_example"), list(EXAMPLE_LABELS), key="yk_example", on_change=on_example)
left, right = st.columns([3, 2])
source = left.text_area(t("yk_source"), key="yk_source", height=420)
try:
    kernel_file = gate.check_source(source)
    kernel_names = [k.name for k in kernel_file.kernels]
    if not kernel_names:
        raise gate.SourceRefused(gate.Refusal("no_kernel", 1))
except gate.SourceRefused as refused:
    st.error(yk.refusal_text(refused.refusal))
    layout.stop_page()

with right:
    kernel_name = st.selectbox(t("yk_kernel"), kernel_names, index=len(kernel_names) - 1, key="yk_kernel")
    prefilled = argspec.prefill(kernel_file.kernel(kernel_name))
    st.caption(t("yk_prefilled", specs=", ".join(f"{s.name}=?" if s.needs_value else s.text() for s in prefilled)))
    args_text = st.text_area(t("yk_args"), key="yk_args", height=150, help=t("yk_args_help"))
    c1, c2 = st.columns(2)
    num_warps = c1.selectbox(t("yk_num_warps"), WARPS, index=2, key="yk_num_warps")
    num_stages = int(c2.number_input(t("yk_num_stages"), 1, 8, 3, key="yk_num_stages"))
    sizes_text = st.text_area(t("yk_sizes"), key="yk_sizes", height=100, help=t("yk_sizes_help"))
    c3, c4, c5 = st.columns(3)
    grid_text = c3.text_input(t("yk_grid"), key="yk_grid")
    flops = c4.number_input(t("yk_flops"), 0.0, 1e18, key="yk_flops", format="%.4g")
    precision = c5.radio(t("yk_precision"), ki.FLOP_PRECISIONS, key="yk_precision", horizontal=True)

# Full width: three or more GPU names do not fit beside the source.
gpu_keys = st.multiselect(t("yk_gpus"), data.gpu_keys(), default=[k for k in DEFAULT_GPUS if k in data.gpu_keys()],
                          format_func=data.gpu_labeler(), key="yk_gpus")

try:
    boxes = yk.read_boxes(prefilled, args_text, sizes_text, grid_text)
except yk.BoxError as err:
    st.error(yk.box_problem_text(err.problem))
    if err.problem.box == "args":
        st.button(t("yk_args_reset"), key="yk_args_reset", on_click=yk.reset_args, args=(prefilled,))
    layout.stop_page()
specs, sizes, grid, moved = boxes.specs, boxes.sizes, boxes.grid, boxes.moved

state = {"source": source, "args": args_text, "sizes": sizes_text, "grid": grid_text, "flops": flops}
encoded = share.encode_state(state)
urlstate.write("k", encoded)
st.download_button(t("yk_download"), json.dumps(state, indent=1), file_name="your_kernel.json",
                   mime="application/json")


def interpreter_section(kernel_file, kernel_name, specs, sizes, grid, num_warps, num_stages) -> None:
    """No GPU here, running allowed: one launch in Triton's interpreter at small sizes, its wall time marked
    as the CPU's."""
    st.caption(t("yk_measure_no_gpu"))
    st.caption(t("yk_interpret_what"))
    example = examples.example_named(kernel_file.source)
    refused = interpret.check_size(sizes, grid)
    if refused:
        figures = {"value": refused.value, "limit": refused.limit}
        st.warning(t("yk_interpret_too_large_elements", **figures) if refused.detail == "elements"
                   else t("yk_interpret_too_large_programs", **figures))
        if example:
            st.button(t("yk_interpret_small"), key="yk_interpret_small",
                      on_click=load, args=(example_state(example, small=True),))
        return
    if st.button(t("yk_interpret"), key="yk_interpret"):
        with st.spinner(t("yk_interpreting")):
            result = interpret.run(kernel_file, kernel_name, specs, sizes, grid, num_warps, num_stages, example)
        yk.interpreter_run(result)


@st.cache_data(max_entries=64, show_spinner=False)
def compiled(source: str, kernel: str, spec_texts: tuple, gpu_keys: tuple, num_warps: int, num_stages: int):
    kf = gate.check_source(source)
    specs = argspec.merge(argspec.prefill(kf.kernel(kernel)), [argspec.parse_arg(s) for s in spec_texts])
    return sandbox.compile_kernel(kf, kernel, specs, [data.gpu_by_key(k) for k in gpu_keys], num_warps, num_stages)

with st.expander(t("yk_record_title")):
    your_kernel_record.record_table(record.read_record())

if not gpu_keys:
    st.info(t("yk_pick_gpu"))
    layout.stop_page()
if not yk.compile_allowed():        # the sandbox's probe, the server's address, the teacher's choice
    layout.stop_page()
if st.button(t("yk_compile"), type="primary", key="yk_compile") or st.session_state.get("yk_compiled"):
    st.session_state["yk_compiled"] = True
    try:
        work = (source, kernel_name, tuple(s.text() for s in specs), tuple(gpu_keys), num_warps, num_stages)
        with heavy_work.turn_once("yk_compile", work), layout.working("your_kernel", t("yk_wait", n=len(gpu_keys))):
            report = compiled(source, kernel_name, tuple(s.text() for s in specs), tuple(gpu_keys), num_warps,
                              num_stages)
    except argspec.ArgSpecError as err:      # a tuned constexpr that a config leaves without a value
        st.error(yk.box_problem_text(yk.BoxProblem("args", "missing_value", 0, "", err.text)))
        layout.stop_page()
    rows = [ki.inspect_variant(data.gpu_by_key(v.gpu), v, ki.grid_programs(grid), moved, flops or None, precision)
            for v in report.variants]
    st.subheader(t("yk_table_title"))
    yk.results_table(rows)
    yk.specialisation_caption(report.specialisation)
    good = [r for r in rows if r.variant.resources]
    if good:
        pick = st.selectbox(t("yk_detail_gpu"), range(len(good)), key="yk_detail",
                            format_func=lambda i: good[i].gpu.name + ("" if good[i].variant.config is None
                                                                      else f" · config {good[i].variant.config}"))
        row = good[pick]
        st.subheader(t("yk_what_if_title"))
        yk.what_if_table(row)
        st.subheader(t("yk_asm_title"))
        yk.assembly(row, source)
    interpreted = measure.running_pasted_allowed() and not torch.cuda.is_available()
    st.subheader(t("yk_interpret_title") if interpreted else t("yk_measure_title"))
    if not measure.running_pasted_allowed():
        st.caption(t("yk_measure_off", env=measure.RUN_PASTED_ENV))
    elif not torch.cuda.is_available():
        interpreter_section(kernel_file, kernel_name, specs, sizes, grid, num_warps, num_stages)
    elif refused := measure.refusal():       # the sandbox cannot have the GPU here: nothing is run
        yk.measurement(refused)
    elif st.button(t("yk_measure"), key="yk_measure"):
        with st.spinner(t("yk_measuring")):
            result = measure.measure(kernel_file, kernel_name, specs, sizes, grid, num_warps, num_stages, moved or 0,
                                     flops or None, reference=examples.example_named(kernel_file.source))
        yk.measurement(result)
layout.page_end()
