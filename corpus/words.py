"""Words and sentences as the code that reads questions, pages and answers compares them: words lowercased,
function words aside, a plural's "s" cut and cut to five letters (a crude stem); sentences split at their
ends, not at an initial's period. The one stemmer and sentence splitter of the multi-hop search, the comparison, the
long-text route's choice of chunks, the graph's sentences, the gap, grounding and the metric. Aside, as
what a stored index or model is made with: the BM25 index's tokenizer (`corpus.lexical`), the extractive
summaries' clauses (`corpus.chunks`) and the embedder's calibration texts (`corpus.dense`)."""
from __future__ import annotations

import re

_WORD = re.compile(r"[A-Za-z0-9][\w'’-]*")
_POSSESSIVE = re.compile(r"['’]s?$")
_ACRONYM = re.compile(r"(?![IVX]{2})[A-Z]{2}")  # a word of two capitals names something ("UK", "EU"); "II" is a number
WORD_PART = re.compile(r"[^\W_]+")  # loosely, a hyphen or an apostrophe ends a word: "computer-animated" says "animated"
_PLURAL = re.compile(r"(?<=\w{2}[^\Wsui])s$")  # a plural's "s" ("rates"), not "class", "status" or "basis"
_PERIOD = re.compile(r"fy|cy|(?:fy|cy|q[1-4]|h[12])?\d+(?:-?[a-z])?")  # "FY2022", "FY 2022", "Q3", "2019", a form's "10-K"
# a sentence's end: ".", "!" or "?" and a space before what starts a sentence (not a lowercase word: "e.g. the",
# "Inc. and"), but not an initial's or a title's period before a name ("singer-songwriter M. Ward", "U.S. Steel",
# "E. B. White", "Edward Davis Wood Jr. (October 10, 1924 – ...)", "Adj. EBITDA"); with `lines`, a line break too
_NOT_INITIAL = r"(?<!\b[A-Z]\.)(?<!\b(?:Mr|Ms|Dr|St|Jr|Sr)\.)(?<!\b(?:Mrs|Adj)\.)"
_SENTENCE_END = re.compile(rf"(?<=[.!?]){_NOT_INITIAL}\s+(?![a-z])")
_SENTENCE_OR_LINE_END = re.compile(rf"{_SENTENCE_END.pattern}|\s*\n\s*")
MONTHS = {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december"}
STOPWORDS = frozenset("""a an the of in on at to for by with from and or but is are was were be been being do does did
has have had what which who whom whose when where why how that this these those it its as than then there their they
he she his her him them not no yes both either neither also same other another one two first second more most less
least many much into onto over under about after before between during through while since until upon can could will
would should may might shall must if so such only own very just any all each every some few""".split())
ROW_WORDS = frozenset({"other", "first", "second", "more", "most", "less", "least", "same", "own"})


def words(text: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(text)]


def stems(text: str, rows: bool = False, loose: bool = False, months: bool = True, numbers: bool = False) -> set[str]:
    """Content words of three letters or more, or two capitals ("UK", "US": a name, not "us"), a plural's "s" cut
    ("rates" meets "rate", not in "class", "status" or "basis") and cut to five letters (a crude stem:
    "translated" and "translation" meet), a possessive's or plural's apostrophe cut ("days'" is "day",
    "ACME's" is "acme"); no function word, number, period ("FY2022", "Q3") or form's number ("10-K"). With
    `rows`, the function words a table's row label is made of are words too ("Other", "Less", "Most":
    ROW_WORDS); `loose`, for pages written apart (the comparison's two openings), a hyphen ends a word
    ("computer-animated" says "animated"); without `months`, a month is no word (it names no bridge, nor a
    section); with `numbers`, numbers and periods are words too (a next search's terms: "the 2011 census")."""
    function = STOPWORDS - ROW_WORDS if rows else STOPWORDS
    if loose:
        found = [word for word in WORD_PART.findall(text.lower()) if len(word) > 2]
    else:
        found = [word.lower() for word in (_POSSESSIVE.sub("", word) for word in _WORD.findall(text))
                 if len(word) > 2 or _ACRONYM.fullmatch(word)]
    return {_PLURAL.sub("", word)[:5] for word in found if word not in function and (months or word not in MONTHS)
            and (numbers or not _PERIOD.fullmatch(word))}


def sentences(text: str, lines: bool = False) -> list[str]:
    """The text's sentences, stripped, in order (module rule); with `lines`, its lines' too (a page's table
    rows and headings are no sentences)."""
    end = _SENTENCE_OR_LINE_END if lines else _SENTENCE_END
    return [part for part in (part.strip() for part in end.split(text.strip())) if part]


def first_sentence(text: str) -> str:
    """What an answer states first ("No. It did not ..." → "No."); "" for no text."""
    return next(iter(sentences(text)), "")
