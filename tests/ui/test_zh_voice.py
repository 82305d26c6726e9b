"""中文 as one voice: every Chinese text (explorer_ui/locales/*.zh.toml) uses the terminology table's word for
each term (explorer_ui/terminology.zh.toml) and none of the renderings it rules out, and puts no space
between two Chinese characters (a space beside a Latin term, "每个 SM", is fine). The checks are shown to
find what they look for on made-up texts first. The code panels' comment table (code_comments.zh.toml) is
held to the same words."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from explorer_ui import quiz
from explorer_ui.i18n import LOCALES_DIR, TEXT, text_in

UI_DIR = Path(__file__).resolve().parents[2] / "explorer_ui"
TERMS_PATH = UI_DIR / "terminology.zh.toml"
COMMENTS_PATH = UI_DIR / "code_comments.zh.toml"       # the code panels' comments: English line = Chinese line
WORDS_DIR = UI_DIR.parent / "softmax_core" / "words"    # the library's words for its codes: <topic>.<lang>.toml
TERMS = tomllib.loads(TERMS_PATH.read_text(encoding="utf-8"))

# Chinese characters and the CJK and full-width punctuation that sits between them. The texts write some
# punctuation in its ASCII form (",", ":", "(" ...): after a Chinese character it belongs to the Chinese text.
CJK = r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]"
# A space, or a single line break inside a paragraph (Markdown shows it as a space), between two of them.
CJK_GAP = re.compile(f"(?:(?<={CJK})|(?<={CJK}[,:;!?)]))(?:[ \\t\\u00a0\\u3000]+|[ \\t]*\\n[ \\t]*)(?=\\(?{CJK})")

# What is not prose: `code`, {placeholders}, a link's target, file paths and dotted or called names.
_NOT_PROSE = re.compile(r"`[^`]*`|\{[^{}]*\}|\]\([^)]*\)|\S*[/\\]\S*|\b\w+(?:\.\w+)+\b|\b\w+\(\)")


def prose(text: str) -> str:
    return _NOT_PROSE.sub(" ", text)


def zh_texts() -> dict[str, str]:
    out = {}
    for path in sorted(LOCALES_DIR.glob("*.zh.toml")):
        out.update(tomllib.loads(path.read_text(encoding="utf-8")))
    return out


def term_problems(en: dict[str, str], zh: dict[str, str], terms: dict) -> list[str]:
    """For each term: a Chinese text that uses a word the table rules out, or whose English says the term
    while the Chinese has neither the table's word nor an accepted form."""
    problems = []
    for name, term in terms.items():
        said = re.compile(rf"(?<![\w-]){term['en']}(?![\w(-])", re.IGNORECASE)
        avoid = [re.compile(a, re.IGNORECASE) for a in term.get("avoid", ())]
        words = [term["zh"], *term.get("accept", ())]
        for key, text in zh.items():
            if key in term.get("except", ()):
                continue
            chinese = prose(text)
            for pattern in avoid:
                if pattern.search(chinese):
                    problems.append(f"{key}: says {pattern.search(chinese).group(0)!r}, the table's word for "
                                    f"{name!r} is {term['zh']!r}")
            english = prose(en.get(key, ""))
            # an all-capitals match is a constant (CHUNK, BLOCK), not the term
            uses = any(not m.group(0).isupper() for m in said.finditer(english))
            if uses and not any(w.lower() in chinese.lower() for w in words):
                problems.append(f"{key}: its English says {name!r}, its Chinese lacks {term['zh']!r}")
    return problems


def gaps(zh: dict[str, str]) -> list[str]:
    return [f"{key}: {text[max(0, m.start() - 6):m.end() + 6]!r}" for key, text in zh.items()
            for m in CJK_GAP.finditer(text)]


def test_the_checks_find_what_they_look_for():
    en = {"a": "Each program loads one lane.", "b": "The launch plan.", "c": "A `program` in code."}
    zh = {"a": "每个程序加载一个通道。", "b": "启动计划。", "c": "代码里的东西。"}
    found = term_problems(en, zh, TERMS)
    assert any("a: says '程序'" in p for p in found) and any("a: says '通道'" in p for p in found)
    assert any(p.startswith("a: its English says 'lane'") for p in found)
    assert any("b: says '启动计划'" in p for p in found)
    assert not [p for p in found if p.startswith("c:")]            # a term in code is not prose
    assert term_problems({"a": "Each program loads one lane."}, {"a": "每个 program 加载一个位置。"}, TERMS) == []
    wrong = {"x": "该内核 运行时", "y": "拆分内核\n真实发布的字", "z": "结果。 然后", "w": "交换,\n所以"}
    assert [g.split(":")[0] for g in gaps(wrong)] == list(wrong)
    assert gaps({"ok": "每个 SM 上有 {n} 个 program。\n\n下一段。", "ok2": "N = 781 时", "ok3": "(max, sum)"}) == []


def test_every_chinese_text_follows_the_terminology_table():
    en = {key: entry["en"] for key, entry in TEXT.items() if "en" in entry}
    problems = term_problems(en, zh_texts(), TERMS)
    assert not problems, "\n".join(problems)


def comment_lines() -> dict[str, str]:
    def flat(table: dict) -> dict[str, str]:
        out = {}
        for key, value in table.items():
            out.update(flat(value) if isinstance(value, dict) else {key: value})
        return out

    return flat(tomllib.loads(COMMENTS_PATH.read_text(encoding="utf-8")))


def word_tables() -> tuple[dict[str, str], dict[str, str]]:
    """(English, Chinese) of the library's words, each key as "<topic>.<key>"."""
    def flat(table: dict, prefix: str) -> dict[str, str]:
        out = {}
        for key, value in table.items():
            out.update(flat(value, f"{prefix}{key}.") if isinstance(value, dict) else {f"{prefix}{key}": value})
        return out

    en, zh = {}, {}
    for path in sorted(WORDS_DIR.glob("*.zh.toml")):
        topic = path.name.removesuffix(".zh.toml")
        zh.update(flat(tomllib.loads(path.read_text(encoding="utf-8")), f"{topic}."))
        english = WORDS_DIR / f"{topic}.en.toml"
        if english.exists():
            en.update(flat(tomllib.loads(english.read_text(encoding="utf-8")), f"{topic}."))
    return en, zh


def test_the_librarys_words_follow_the_table_too():
    en, zh = word_tables()
    assert zh                                       # the check sees the library's words
    problems = term_problems(en, zh, TERMS) + gaps(zh)
    assert not problems, "\n".join(problems)


def test_the_code_panels_comments_follow_the_table_too():
    lines = comment_lines()
    problems = term_problems({line: line for line in lines}, lines, TERMS) + gaps(lines)
    assert not problems, "\n".join(problems)


def test_the_table_is_well_formed():
    assert TERMS
    for name, term in TERMS.items():
        assert set(term) <= {"en", "zh", "accept", "avoid", "except"}, name
        assert term["en"] and term["zh"], name
        for pattern in (term["en"], *term.get("avoid", ())):
            re.compile(pattern)
        en, zh = word_tables()
        en.update({key: entry["en"] for key, entry in TEXT.items()})
        zh.update({key: entry["zh"] for key, entry in TEXT.items()})
        assert not [k for k in term.get("except", ()) if k not in zh], name      # no stale exceptions
        assert not [k for k in term.get("except", ()) if not term_problems(
            {k: en[k]}, {k: zh[k]}, {name: {**term, "except": []}})], name   # each still needed


def test_no_space_between_two_chinese_characters():
    found = gaps(zh_texts())
    assert not found, "\n".join(found)


@pytest.mark.parametrize("guess, answer", [(8, 12), (3, 4), (12, 8)])
def test_a_wrong_guess_is_told_by_how_much_in_both_languages(guess, answer):
    """"You said 8, 1.5 times too little" read as "less by 1.5 times": the answer is computed as a multiple
    of the guess (too low) or the guess as a multiple of the answer (too high)."""
    question = quiz.Question(key="q", prompt="?", answer=answer, explain="")
    verdict = quiz.grade(question, guess)
    text = {lang: text for lang in ("en", "zh") for text in [in_language(lang, question, guess, verdict)]}
    ratio = f"{max(guess, answer) / min(guess, answer):.2g}"
    assert ratio in text["en"] and ratio in text["zh"]
    if guess < answer:
        assert text["zh"].startswith("偏小") and "是你猜的" in text["zh"] and "少了" not in text["zh"]
        assert "too little" not in text["en"] and text["en"].startswith("Too low")
    else:
        assert text["zh"].startswith("偏大") and text["en"].startswith("Too high")


def in_language(lang: str, question, guess, verdict) -> str:
    """The verdict in `lang`; the language of the session is put back as it was, so no later test inherits it."""
    import streamlit as st

    had, before = "lang" in st.session_state, st.session_state.get("lang")
    st.session_state["lang"] = lang
    try:
        return quiz.verdict_text(question, guess, verdict)
    finally:
        if had:
            st.session_state["lang"] = before
        else:
            del st.session_state["lang"]


# The app's 中文 punctuation: 。 and 、 full width; commas, colons, semicolons, brackets and question marks as
# ASCII, with a space between a Chinese character and a Latin word, a number or a {placeholder}.
FULL_WIDTH_NOT_USED = "，：；（）？"
CJK_BESIDE_LATIN = re.compile(r"[\u4e00-\u9fff][A-Za-z0-9]|[A-Za-z0-9][\u4e00-\u9fff]")


def punctuation_problems(zh: dict[str, str]) -> list[str]:
    found = []
    for key, text in zh.items():
        if not isinstance(text, str):
            continue
        marks = sorted({c for c in text if c in FULL_WIDTH_NOT_USED})
        if marks:
            found.append(f"{key}: full-width {''.join(marks)}")
        if CJK_BESIDE_LATIN.search(prose(text)):
            found.append(f"{key}: no space between a Chinese character and {CJK_BESIDE_LATIN.search(prose(text)).group()!r}")
    return found


def test_punctuation_check_finds_what_it_looks_for():
    assert punctuation_problems({"a": "共{n}块，softmax"}) and punctuation_problems({"b": "每个SM"})
    assert not punctuation_problems({"c": "每个 SM 的 program 数,共 {n} 块。"})


def test_every_chinese_text_punctuates_as_one_voice():
    _, library = word_tables()
    found = punctuation_problems({**zh_texts(), **library})
    assert not found, "\n".join(found)
