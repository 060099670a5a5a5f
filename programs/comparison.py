"""Comparisons answered in code, with no LM: a question that sets named things side by side
(`programs.hops.parts`), answered from each one's own page, the document titled by its name, by what
that page opens with.

- order: "Which band was formed first, The Exies or Circus Diablo?", "Who is the oldest, A or B?": the
  thing whose page prints the earliest year first (a person's birth, a band's forming, a magazine's
  first issue: what an encyclopedic page opens with), or the latest for "younger", "newer", "later";
  of "Who died first, A or B?", the year a life's span in the opening's parenthesis ends with ("(October
  10, 1924 – December 10, 1978)"). Only a choice between the names: joined by "or", or named before the
  sentence that asks ("A and B were founded within a year of each other. Which was the first to serve
  pizza?"); "Who was the first president of A and B?" is none. A tie, or a page without such a year,
  answers nothing.
- both: "Are A and B both film directors?": "Yes" when each one's opening sentence names what the
  question says of them (its words besides the names, as stems); "No" when one's names a word of it
  that another's does not ("a 1976 British-American family drama film" is not animated, "Frozen is a
  2013 American computer-animated film" is); nothing when they agree on only part of it (the openings
  may word the rest otherwise).
- same: "Are Nantong and Jingdezhen in the same province?": each one's opening names its value beside
  the question's word ("Jiangsu province", "Jiangxi province"), or for a nationality the word its
  opening says it is ("is an American film director"); "Yes" when the values are one, "No" when not,
  nothing when an opening names none.
- common: "What do A and B have in common?": the longest run of words their opening sentences share,
  besides the question's and stopwords, as the first one prints it ("an American writer" and "an
  American poet": "American").

With the small-model profile the comparison answers the question (the iterative program's comparison rung);
for any LM it checks what a step states (`Comparison.states`): a verdict or a choice that agrees is grounded
on the sides' own pages, which no sentence can do alone (a page that grounds one name or verdict grounds
the other as well), and one that does not is refused with what code compared as the reason.

A part without a page titled by its name, or a question of another kind ("Which plant is larger?"),
gets no answer. On a corpus whose documents are not titled by what they are about (filings) no part has
a page, so the rung never answers there. On HotpotQA's 100 questions (22 comparisons) it answers 10, all
right; none of TAT-QA's 1,668 nor of FinanceBench's 62 (docs/benchmarks.md).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ferret.corpus.passages import without_title
from ferret.corpus.numbers import EARLY_YEAR
from ferret.corpus.words import WORD_PART, sentences, stems
from ferret.programs.grounding import GROUNDED, Grounding
from ferret.programs.hops import parts, title_name
from ferret.programs.passage_answer import ARTICLE, asks_yes_no
from ferret.signatures.types import Finding

PAGE_SEARCH = 5  # hits of a part's own search among which its page is looked for
LEAD_CHARS = 40  # of an opening quoted as a value (a finding's bound)
_EARLIEST = re.compile(r"\b(?:first|earlier|earliest|older|oldest)\b", re.IGNORECASE)
_LATEST = re.compile(r"\b(?:younger|youngest|newer|newest|later|latest|last|(?:more|most) recent)\b", re.IGNORECASE)
_DEATH = re.compile(r"\b(?:die|died|dies|death|dead)\b", re.IGNORECASE)
_COMMON = re.compile(r"\bin common\b", re.IGNORECASE)
_SAME = re.compile(r"\bsame\s+(\w+)", re.IGNORECASE)
_NAME = r"[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*"
_DEMONYM = re.compile(rf"\b(?:is|was|are|were)\s+(?:a|an)\s+({_NAME})")  # "is an American film director"
_BOTH = re.compile(r"\bboth\b", re.IGNORECASE)
_LIFE_SPAN = re.compile(r"\(([^()]*[–—-][^()]*)\)")  # "(October 10, 1924 – December 10, 1978)"
_VERDICT = re.compile(r"\s*(yes|no)\b", re.IGNORECASE)


@dataclass
class Side:
    """One part of the comparison: its name as its page titles it, its page, and what was read there."""
    name: str
    hit: dict
    opening: str  # the page's first sentence, its title aside
    value: str = ""  # the year or the words read on its page for the comparison
    sentence: str = ""  # the sentence that prints the value


@dataclass
class Comparison:
    answer: str
    kind: str  # "order", "both", "same" or "common"
    sides: list[Side]

    @property
    def findings(self) -> list[Finding]:
        """Each side's value on its page, quoted in its sentence."""
        return [Finding(label=side.name, value=side.value, doc_id=side.hit["doc_id"], page=side.hit["page"],
                        section=side.hit.get("section") or "", context=" ".join(side.sentence.split())[:120])
                for side in self.sides]

    @property
    def shown(self) -> list[str]:
        """Each side's value with its page: "The Exies: 1997 · p.1"."""
        return [f"{side.name}: {side.value} · p.{side.hit['page']}" for side in self.sides]

    def grounding(self) -> Grounding:
        """Grounded on each side's own page, by the value code read there."""
        return Grounding(GROUNDED, shown=self.shown, pages={(s.hit["doc_id"], s.hit["page"]): GROUNDED for s in self.sides})

    def states(self, answer: str) -> bool:
        """Whether `answer` states this comparison's answer: the same yes or no first ("Yes, both are
        directors"); of an order, the side it names first is the one picked ("The Exies, formed in 1997, before
        Circus Diablo"); of what they have in common, the shared words."""
        if self.kind in ("both", "same"):
            return bool(verdict := _VERDICT.match(answer)) and verdict[1].lower() == self.answer.lower()
        if self.kind == "common":
            return stems(self.answer, loose=True) <= stems(answer, loose=True)
        said = _plain(answer)
        named = [(at.start(), side.name) for side in self.sides
                 if (at := re.search(rf"(?<!\w){re.escape(_plain(side.name))}(?!\w)", said))]
        return bool(named) and min(named)[1] == self.answer


def compare(question: str, corpus, bucket: str | None = None, doc_id: str | None = None) -> Comparison | None:
    """The answer to a comparison of the question's parts, read on their own pages (module rules);
    None when the question is no comparison of a kind read here, or a part has no page, or the pages
    do not decide."""
    named = parts(question)
    kind = _kind(question)
    if len(named) < 2 or kind is None or (kind == "order" and not _choice(question, named)):
        return None
    sides = [side for name in named if (side := _side(corpus, name, bucket, doc_id)) is not None]
    if len(sides) != len(named) or len({(s.hit["doc_id"], s.hit["page"]) for s in sides}) != len(sides):
        return None
    return {"order": _order, "both": _both, "same": _same, "common": _common}[kind](question, sides)


def _kind(question: str) -> str | None:
    if asks_yes_no(question):
        return "same" if _SAME.search(question) else "both" if _BOTH.search(question) else None
    if _COMMON.search(question):
        return "common"
    if _EARLIEST.search(question) or _LATEST.search(question):
        return "order"
    return None


def _choice(question: str, named: list[str]) -> bool:
    """Whether the question asks to choose among the names: "or" joins the last two, or the sentence
    that asks names none of them."""
    joined = re.search(rf"{re.escape(named[-2])}\W*\s+or\s+(?:the\s+)?{re.escape(named[-1])}", question, re.IGNORECASE)
    asking = (sentences(question) or [""])[-1]
    return bool(joined) or not any(name.lower() in asking.lower() for name in named)


def _side(corpus, name: str, bucket: str | None, doc_id: str | None) -> Side | None:
    """The part's page: among its own search's top hits, the one whose document is titled by the name
    (a parenthesis aside: "Medici (board game)"; a leading article aside: "The Exies")."""
    wanted = _plain(name)
    for hit in corpus.search_text(name, bucket=bucket, doc_id=doc_id, top_k=PAGE_SEARCH, hybrid=True):
        title = title_name(hit.get("title") or hit["doc_id"])
        if _plain(title) == wanted:
            text = corpus.page_text(hit["doc_id"], hit["page"]) or ""
            body = without_title(text, hit.get("title") or "")
            opening = next((s for s in sentences(body, lines=True) if stems(s, loose=True) - stems(title, loose=True)), "")
            return Side(title, {**hit, "text": body}, opening)
    return None


def _plain(name: str) -> str:
    return " ".join(ARTICLE.sub("", name.strip()).lower().split())


def _order(question: str, sides: list[Side]) -> Comparison | None:
    died = bool(_DEATH.search(question))
    for side in sides:
        sentence = side.opening if died else next((s for s in sentences(side.hit["text"], lines=True) if EARLY_YEAR.search(s)), "")
        year = _death_year(sentence) if died else EARLY_YEAR.search(sentence)
        if year is None:
            return None
        side.value, side.sentence = year.group(), sentence
    years = [int(side.value) for side in sides]
    pick = min(years) if _EARLIEST.search(question) else max(years)
    if years.count(pick) > 1:
        return None
    return Comparison(sides[years.index(pick)].name, "order", sides)


def _death_year(opening: str) -> re.Match | None:
    """The year a life's span ends with, in the opening's first parenthesis: "(1899 – 1985)", not "(born 1934)"."""
    span = _LIFE_SPAN.search(opening)
    years = list(EARLY_YEAR.finditer(opening, span.start(1), span.end(1))) if span else []
    return years[-1] if len(years) >= 2 else None


def _both(question: str, sides: list[Side]) -> Comparison | None:
    said = stems(asks_yes_no(question), loose=True) - set().union(*(stems(side.name, loose=True) for side in sides))
    if not said:
        return None
    held = [said & stems(side.opening, loose=True) for side in sides]
    if all(found == said for found in held):
        answer, shown = "Yes", held
    elif any(found - other for found in held for other in held):  # the words that tell them apart
        answer, shown = "No", [found - set.intersection(*held) for found in held]
    else:
        return None
    for side, found in zip(sides, shown):
        side.value, side.sentence = _printed(side.opening, found) or _lead(side.opening), side.opening
    return Comparison(answer, "both", sides)


def _same(question: str, sides: list[Side]) -> Comparison | None:
    noun = _SAME.search(question).group(1).lower()  # "province", "nationality"
    word = rf"(?i:{re.escape(noun)})"
    beside = re.compile(rf"({_NAME})\s+{word}\b|\b{word}\s+(?:of\s+)?({_NAME})")
    for side in sides:
        found = beside.search(side.opening) or (_DEMONYM.search(side.opening) if noun == "nationality" else None)
        if found is None:
            return None
        side.value, side.sentence = next(group for group in found.groups() if group), side.opening
    return Comparison("Yes" if len({_plain(side.value) for side in sides}) == 1 else "No", "same", sides)


def _common(question: str, sides: list[Side]) -> Comparison | None:
    asked = stems(question, loose=True) | set().union(*(stems(side.name, loose=True) for side in sides))
    shared = set.intersection(*(stems(side.opening, loose=True) for side in sides)) - asked
    for side in sides:
        side.value, side.sentence = _printed(side.opening, shared), side.opening
    if not shared or not all(side.value for side in sides):
        return None
    return Comparison(sides[0].value, "common", sides)


def _printed(sentence: str, roots: set[str]) -> str:
    """The longest run of consecutive words of `sentence` whose roots are among `roots`, as printed."""
    runs, run = [], []
    for match in WORD_PART.finditer(sentence):
        if stems(match.group(), loose=True) & roots:
            run.append(match)
        else:
            run = []
            continue
        runs.append((run[0].start(), run[-1].end()))
    start, end = max(runs, key=lambda span: span[1] - span[0], default=(0, 0))
    return sentence[start:end]


def _lead(sentence: str) -> str:
    """A sentence's first words, within a finding's bounds: what a side that names none of the question's
    words is instead."""
    return sentence[:LEAD_CHARS].rsplit(" ", 1)[0] if len(sentence) > LEAD_CHARS else sentence
