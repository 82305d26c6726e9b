"""Slides: the current animation as an animated GIF and one PNG per frame, for a teacher's slide deck.

Each frame is the very chart the page draws (an explorer_ui.charts.Figure), rendered to PNG by
vl-convert (Vega-Lite's own renderer, bundled in a wheel: no browser, no network), with a caption line
under its title that names the page, its settings and the step. Pillow strings the PNGs into a GIF.
File names carry the page and its settings, so a folder of exports stays readable:
"padding_chain_N781_rows4_break-correct.gif".
"""
from __future__ import annotations

import io
import json
import re
import zipfile
from dataclasses import dataclass
from typing import Callable, Sequence

import pandas as pd

from .charts import Figure

SLIDE_WIDTH = 760          # px of the plotting area: a 16:9 slide at 1280 x 720 leaves room for a title
DEFAULT_FRAME_MS = 900     # the player's own pace (explorer_ui.player.DEFAULT_INTERVAL_S)
SCALE = 1.5                # pixels per CSS pixel: sharp enough for a projector, small enough to mail
_COMPOSITE = ("hconcat", "vconcat", "concat", "facet", "repeat")


def file_stem(page: str, settings: dict) -> str:
    """`page` and its settings as a file name: letters, digits, '-', '_' and '.' only."""
    parts = [page] + [f"{k}{v}" if isinstance(v, (int, float)) and not isinstance(v, bool) else f"{k}-{v}"
                      for k, v in settings.items()]
    stem = "_".join(parts)
    return re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-")[:150]


def _records(frame: pd.DataFrame) -> list:
    return json.loads(frame.to_json(orient="records", date_format="iso"))   # NaN -> null, as Vega expects


def figure_spec(fig: Figure, caption: str = "", width: int = SLIDE_WIDTH, height: int | None = None) -> dict:
    """A self-contained Vega-Lite spec of `fig`: its data inlined, a fixed size, the caption as subtitle."""
    spec = fig.chart.to_dict(validate=False)
    spec["datasets"] = {name: _records(df) for name, df in fig.datasets.items()}
    if not any(k in spec for k in _COMPOSITE):
        spec.setdefault("width", width)
        if height is not None:
            spec["height"] = height
    for view in spec.get("vconcat", ()):          # stacked views share the slide's width
        view.setdefault("width", width)
    title = spec.get("title")
    text = title.get("text", "") if isinstance(title, dict) else (title or "")
    if caption:
        # Vega draws no subtitle under an empty title: a chart whose title sits on an inner view (a stacked
        # pair) gets the caption as its top-level title instead.
        head = {"text": text, "subtitle": caption} if text else {"text": caption, "fontWeight": "normal"}
        spec["title"] = {**(title if isinstance(title, dict) else {}), **head, "anchor": "start"}
    spec.setdefault("background", "white")
    return spec


def render_png(spec: dict, scale: float = SCALE) -> bytes:
    import vl_convert

    return vl_convert.vegalite_to_png(spec, scale=scale)


@dataclass(frozen=True)
class SlideExport:
    stem: str
    gif: bytes
    frames: tuple[tuple[str, bytes], ...]       # (file name, PNG bytes), one per step
    captions: tuple[str, ...]

    def zip_of_frames(self) -> bytes:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, png in self.frames:
                archive.writestr(name, png)
            archive.writestr(f"{self.stem}.txt", "\n".join(self.captions) + "\n")
        return buffer.getvalue()


def assemble_gif(pngs: Sequence[bytes], frame_ms: int = DEFAULT_FRAME_MS) -> bytes:
    """One animated GIF (looping) from PNG frames; frames of different sizes are centred on white."""
    from PIL import Image

    if not pngs:
        raise ValueError("an animation needs at least one frame")
    images = [Image.open(io.BytesIO(p)).convert("RGB") for p in pngs]
    w = max(im.width for im in images)
    h = max(im.height for im in images)
    canvas = []
    for im in images:
        page = Image.new("RGB", (w, h), "white")
        page.paste(im, ((w - im.width) // 2, (h - im.height) // 2))
        canvas.append(page.convert("P", palette=Image.Palette.ADAPTIVE, colors=255))
    out = io.BytesIO()
    canvas[0].save(out, format="GIF", save_all=True, append_images=canvas[1:], duration=frame_ms, loop=0,
                   disposal=1)
    return out.getvalue()


def export_animation(figure_for: Callable[[int], Figure], n_steps: int, *, page: str, settings: dict,
                     caption_for: Callable[[int], str], frame_ms: int = DEFAULT_FRAME_MS,
                     width: int = SLIDE_WIDTH, height: int | None = None, scale: float = SCALE) -> SlideExport:
    """Render every step's chart with its caption; the GIF and the PNGs come out of the same renders."""
    if n_steps < 1:
        raise ValueError("an animation needs at least one step")
    stem = file_stem(page, settings)
    captions = tuple(caption_for(step) for step in range(n_steps))
    pngs = [render_png(figure_spec(figure_for(step), captions[step], width, height), scale) for step in range(n_steps)]
    digits = len(str(n_steps - 1))
    frames = tuple((f"{stem}_step{step:0{digits}d}.png", png) for step, png in enumerate(pngs))
    return SlideExport(stem, assemble_gif(pngs, frame_ms), frames, captions)


@dataclass(frozen=True)
class SlideSource:
    """What an animated page hands the player so that it can export itself: the chart of any step, the
    caption line of any step, and the settings that name the files."""

    page: str                                  # URL name of the page, e.g. "padding_chain"
    label: str                                 # the page's name in the current language, for the caption
    settings: dict                             # URL name -> value, in the order they appear in file names
    figure_for: Callable[[int], Figure]
    height: int | None = None
    shown: dict | None = None                  # the caption's settings: widget label -> value, in the reader's
                                               # language ("列数 N = 781", a GPU by its name); else `settings`

    def caption_for(self, step: int, n_steps: int) -> str:
        from .i18n import t

        shown = ", ".join(f"{k} = {v:,}" if isinstance(v, int) and not isinstance(v, bool) else f"{k} = {v}"
                          for k, v in (self.shown or self.settings).items())
        return " · ".join(part for part in (self.label, shown, t("slides_step", step=step + 1, steps=n_steps)) if part)


def export_controls(source: SlideSource, n_steps: int, *, key: str) -> None:
    """An expander with one button that renders the animation, then the GIF and a ZIP of PNGs to download.
    Rendering waits for the click: a GIF of a dozen frames takes a second or two."""
    import streamlit as st

    from . import heavy_work
    from .i18n import t

    state_key = f"{key}_slides"
    stem = file_stem(source.page, source.settings)
    with st.expander(t("slides_title"), icon="🖼️"):
        st.caption(t("slides_help", steps=n_steps))
        if st.button(t("slides_make"), key=f"{key}_slides_make"):
            try:
                with heavy_work.turn(f"{key}_slides_make"), st.spinner(t("slides_rendering", steps=n_steps)):
                    st.session_state[state_key] = export_animation(
                        source.figure_for, n_steps, page=source.page, settings=source.settings,
                        caption_for=lambda step: source.caption_for(step, n_steps), height=source.height)
            except Exception as err:   # vl-convert missing or a renderer error: say so, keep the page
                st.session_state.pop(state_key, None)
                st.error(t("slides_failed", error=err))
        heavy_work.say_if_cancelled(f"{key}_slides_make")
        made: SlideExport | None = st.session_state.get(state_key)
        if made is not None and made.stem == stem:
            st.image(made.gif, caption=made.captions[0])
            a, b = st.columns(2)
            a.download_button(t("slides_gif"), made.gif, file_name=f"{made.stem}.gif", mime="image/gif",
                              key=f"{key}_slides_gif")
            b.download_button(t("slides_pngs", steps=len(made.frames)), made.zip_of_frames(),
                              file_name=f"{made.stem}_frames.zip", mime="application/zip", key=f"{key}_slides_zip")
        elif made is not None:
            st.caption(t("slides_stale"))
