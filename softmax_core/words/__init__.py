"""The words for every code the library hands out, in each language, kept once: package data of the library.

softmax_core never builds a sentence for a person. Where it has something to say (why a plan launches what
it launches, where a register count came from, which clock timed a run, why a benchmark provider was not
timed) it hands out a *code* (a `Code`, a str Enum) with the *figures* behind it, and records store exactly
that. The words for each code live in this package's tables, `<topic>.<lang>.toml`, one TOML table per code
class (`[ReasonCode]`, `[Limiter]`, ...) keyed by the code's value, beside the tables of pieces a composer
chooses between (`[plan_pieces]`, ...). `describe` turns a code and its figures into words; the command
line, exception messages (English) and the app (the reader's language, through explorer_ui.i18n) all call
it, so a sentence has one home per language.

Formatting is `str.format` plus counted nouns: `{n:,|program|programs}` gives "1 program" or "1,024
programs" (the number, a space, the word); Chinese needs no plural and writes `{n:,}` and the word itself.
A figure that is itself a `Code` is said in words (a limiter figure reads "shared memory", or 共享内存).
"""
from softmax_core.words.core import (CODE_CLASSES, COMPOSERS, LANGUAGES, TABLES, Code, Coded, Figure,  # noqa: F401
                                     describe, format_counted, load_tables, piece, topic_files, words_for)
import softmax_core.words.compose  # noqa: E402,F401  (registers the composers)
