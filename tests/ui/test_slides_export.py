"""explorer_ui.slides: an exported animation is a GIF that opens, with one frame per step, and PNG frames."""
import io
import zipfile

import pandas as pd
import pytest
from PIL import Image

from explorer_ui import charts, slides

STEPS = ["max", "subtract", "exp", "sum", "divide"]


def traffic_figure(step: int) -> charts.Figure:
    rows = [{"impl": "naive", "step": s, "order": i, "code": s, "read": 1, "written": 1, "mb": 1.0 + i,
             "active": i <= step} for i, s in enumerate(STEPS)]
    return charts.stacked_traffic(pd.DataFrame(rows), x_title="MB", y_title="", color_title="kernel",
                                  title="Memory traffic", steps=STEPS)


def test_file_stem_carries_the_settings_and_only_safe_characters():
    stem = slides.file_stem("padding_chain", {"N": 781, "rows": 4, "break": "pad zero/?"})
    assert stem == "padding_chain_N781_rows4_break-pad-zero"
    assert all(c.isalnum() or c in "._-" for c in stem)


def test_spec_is_self_contained_with_the_caption():
    spec = slides.figure_spec(traffic_figure(1), caption="Memory · N=781 · step 2/5")
    assert spec["title"]["subtitle"] == "Memory · N=781 · step 2/5" and spec["title"]["text"] == "Memory traffic"
    (name, records), = spec["datasets"].items()
    assert len(records) == len(STEPS) and spec["width"] == slides.SLIDE_WIDTH


def test_exported_gif_opens_with_one_frame_per_step_and_pngs_beside_it():
    made = slides.export_animation(traffic_figure, len(STEPS), page="memory_traffic", settings={"M": 4096, "N": 781},
                                   caption_for=lambda s: f"内存流量 · step {s + 1}/{len(STEPS)}", frame_ms=500)
    gif = Image.open(io.BytesIO(made.gif))
    assert gif.format == "GIF" and gif.n_frames == len(STEPS)
    assert gif.info.get("duration") == 500 and gif.info.get("loop") == 0
    assert gif.width > slides.SLIDE_WIDTH        # rendered at SCALE
    names = [name for name, _ in made.frames]
    assert names[0] == "memory_traffic_M4096_N781_step0.png" and len(names) == len(STEPS)
    for _, png in made.frames:
        assert Image.open(io.BytesIO(png)).format == "PNG"
    # frames differ: the animation moves
    assert len({png for _, png in made.frames}) == len(STEPS)
    with zipfile.ZipFile(io.BytesIO(made.zip_of_frames())) as archive:
        listed = archive.namelist()
    assert set(names) < set(listed) and "memory_traffic_M4096_N781.txt" in listed


def test_no_frames_is_an_error():
    with pytest.raises(ValueError):
        slides.assemble_gif([])
    with pytest.raises(ValueError):
        slides.export_animation(traffic_figure, 0, page="p", settings={}, caption_for=str)


def test_a_stacked_chart_gets_its_caption_too():
    import numpy as np

    from explorer_ui.padding import LANE_STATES

    def lanes_figure(step: int) -> charts.Figure:
        df = pd.DataFrame({"lane": np.arange(8), "value": np.linspace(-1, 1, 8), "shown": ["x"] * 8,
                           "state": [LANE_STATES[0]] * 8})
        strip = pd.DataFrame([{"lane": 0, "lane_end": 8, "state": LANE_STATES[0], "lanes": "0–7"}])
        return charts.lanes(df, strip, list(LANE_STATES), ["#000"] * len(LANE_STATES), x_title="lane",
                            y_title="value", state_title="state", title="Row 0", block_size=8)

    spec = slides.figure_spec(lanes_figure(0), caption="step 1/2")
    assert spec["title"]["text"] == "step 1/2"
    made = slides.export_animation(lanes_figure, 2, page="p", settings={}, caption_for=lambda s: f"step {s + 1}/2")
    assert made.frames[0][1] != made.frames[1][1]              # same chart, different caption: two frames
    assert Image.open(io.BytesIO(made.gif)).n_frames == 2


def test_the_caption_names_settings_in_the_readers_language(monkeypatch):
    from explorer_ui import i18n
    monkeypatch.setattr(i18n, "language", lambda: "zh")
    source = slides.SlideSource("row_schedule", "行调度", {"gpu": "h200", "N": 781}, figure_for=None,
                                shown={i18n.text_in("zh", "gpu_choice"): "NVIDIA H200 (SXM)",
                                       i18n.text_in("zh", "cols_N"): 781})
    caption = source.caption_for(0, 3)
    assert "h200" not in caption and "NVIDIA H200 (SXM)" in caption and i18n.text_in("zh", "cols_N") in caption
    assert slides.file_stem(source.page, source.settings).startswith("row_schedule")   # files keep URL names


def test_every_animated_page_captions_its_settings_by_their_labels():
    from pathlib import Path
    pages = Path(__file__).resolve().parents[2] / "pages"
    for page in pages.glob("*.py"):
        text = page.read_text()
        for call in text.split("slides.SlideSource(")[1:]:
            assert "shown=" in call.split("quiz.")[0], page.name
