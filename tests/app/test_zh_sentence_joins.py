"""Sentences a page puts side by side are joined as their language writes them: in 中文 no space after a
full-width 。 (no "。 波动" gap), in English one space. Home, padding, row schedule and long rows in 中文."""
import re

import pytest

from explorer_ui import i18n
from tests.support.apptest import open_page

GAP = re.compile(r"[\u3002\uff1a\uff1b\uff01\uff1f\uff09\uff0c]\s+[\u4e00-\u9fff]")   # 。:;!?), then a space, then 汉字


def test_sentences_join_per_language(monkeypatch):
    monkeypatch.setattr(i18n, "language", lambda: "zh")
    assert i18n.sentences("第一句。", "", "第二句。") == "第一句。第二句。"
    monkeypatch.setattr(i18n, "language", lambda: "en")
    assert i18n.sentences("One.", "", "Two.") == "One. Two."


@pytest.mark.slow
@pytest.mark.parametrize("path", ["app.py", "pages/3_padding_chain.py", "pages/4_row_schedule.py",
                                  "pages/7_long_rows.py"])
def test_no_gap_between_chinese_sentences(path):
    at = open_page(path, {"lang": "zh"})
    assert not at.exception
    texts = [str(e.value) for e in [*at.markdown, *at.caption, *at.info, *at.success, *at.warning]]
    gaps = [m.group(0) for text in texts for m in GAP.finditer(text)]
    assert not gaps, gaps
