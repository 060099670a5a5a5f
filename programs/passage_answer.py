"""A read of numbered passages (the loop's first rung) turned into an answer that code can check.

Each value the answer uses becomes a finding quoted from the passage that prints it (the passages it
cites first, then the others it read), on that passage's page:
- a calculation ("(1,250 - 1,100) / 1,100 * 100"), when the question asks for one, is computed in code (`programs.arithmetic`); the
  answer is its result, every operand but a small constant (CONSTANTS) or a number the question gives
  ("DPO = 365 * ...") must be printed as written in a passage (a year the question names is never an operand),
  and each is a finding, so the stated number verifies by construction;
- an answer's own numbers (years aside) must each be printed in a passage, and each is a finding;
- a text answer printed in a passage is a finding; one that is not (a yes/no, a paraphrase) cites the
  passages it names, whole, as the one-call baseline does.
An answer that only restates the question, or copies more than COPIED_WORDS words of a passage instead
of answering, does not stand (its `problem` says so).
`problem` says why the read cannot stand as an answer ("" when it can). Only value findings (never a
whole passage) are kept for the later steps of the loop, which never see raw text.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field

from ferret.corpus.numbers import YEAR, face_value, number_spans, numbers_in
from ferret.corpus.snippets import GAP
from ferret.corpus.words import first_sentence
from ferret.programs.arithmetic import (ExpressionError, asks_calculation, compute, format_result, is_calculation,
                                        may_ask_calculation, written_expression)
from ferret.programs.hops import offered
from ferret.programs.verify import SCALES, TOLERANCE, answer_numbers
from ferret.signatures.types import Finding

CONSTANTS = {*range(1, 13), 100, 1000}  # a percentage's 100, an average's count: no page needs to print them
QUOTE_CHARS = 50  # of context on each side of a value
COPIED_WORDS = 30  # a text answer this long, printed as is in a passage, copies the passage instead of answering
ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|no|never|none|neither|nor|cannot)\b|n't\b", re.IGNORECASE)
_FUNCTION_WORDS = {"the", "and", "for", "are", "was", "were", "does", "did", "has", "have", "had", "can", "could",
                   "will", "would", "should", "shall", "may", "might", "with", "from", "that", "this", "its", "than"}
WHICH_YEAR = re.compile(r"\b(?:what|which)\s+year\b", re.IGNORECASE)  # "in what year", "which year had"
_HOW_MANY = re.compile(r"\bhow\s+many\b", re.IGNORECASE)
_YES_NO = re.compile(r"(?:^|[.?!]\s+)(?:is|are|was|were|do|does|did|has|have|had|can|could|will|would|should|"
                     r"shall|may|might)\b(?:(?!\bor\b)[^?!])*\?", re.IGNORECASE)


@dataclass
class PassageAnswer:
    answer: str
    findings: list[Finding] = field(default_factory=list)  # what the answer cites, each on its page
    derived: list[float] = field(default_factory=list)  # the computed result
    computation: str = ""
    problem: str = ""
    whole_passages: bool = False  # the findings are the cited passages themselves

    @property
    def values(self) -> list[Finding]:
        """The findings that are single values (what later steps may keep), not whole passages."""
        return [] if self.whole_passages else self.findings


def asks_count(question: str) -> bool:
    """The question asks how many."""
    return bool(_HOW_MANY.search(question))


def asks_yes_no(question: str) -> str:
    """The sentence of the question that asks yes or no ("Does Adobe have ...?", "X has an OBE. Does
    Y also have one?"), not which of two ("Did X increase or decrease?"); "" when none does."""
    match = _YES_NO.search(question)
    return match.group(0).lstrip(".?! ") if match else ""


def yes_or_no(question: str, answer: str) -> str:
    """"Yes" or "No" when the question asks yes or no and the answer's first sentence states the
    question's claim (at least half of its words, a parenthesis aside), affirmed or negated ("Puneet
    Sira does not have one." → "No"); "" otherwise, so an answer about something else gets no verdict."""
    claim = _words(asks_yes_no(question).split("(")[0])
    stated = first_sentence(answer)
    if not claim or len(claim & _words(stated)) * 2 < len(claim):
        return ""
    return "No" if _NEGATION.search(stated) else "Yes"


def stated_year(question: str, answer: str) -> str:
    """The one year an answer to "in what year ...?" states that the question does not, when the answer
    says more than the year ("How to Eat is a 1998 book of English cuisine ..." → "1998"); "" when the
    question asks no year, or the answer states none or several."""
    years = set(YEAR.findall(answer)) - set(YEAR.findall(question))
    if not WHICH_YEAR.search(question) or len(years) != 1 or answer.strip(" .") in years:
        return ""
    return years.pop()


def restates(question: str, answer: str) -> bool:
    """The answer adds nothing to the question: no word and no number the question does not hold
    ("The band f(x) performed in both Welcome to the Show and the band f(x)"); a yes or no to a yes/no
    question adds its verdict, and one of two names a question offers adds the choice ("Which is older, A or B?")."""
    if asks_yes_no(question) and re.match(r"\s*(?:yes|no)\b", answer, re.IGNORECASE):
        return False
    if sum(_words(option) <= _words(answer) for option in offered(question)) == 1:
        return False
    return not _words(answer) - _words(question) and set(numbers_in(answer)) <= set(numbers_in(question))


def _words(text: str) -> set[str]:
    """Content words, lowercased, a plural or possessive "s" dropped."""
    return {re.sub(r"(?:'s|s)$", "", word) for word in re.findall(r"[a-z0-9']{3,}", text.lower())} - _FUNCTION_WORDS


def answer_from_passages(question: str, hits: list[dict], calculation: str, answer: str,
                         sources: list[int], repair: bool = True) -> PassageAnswer:
    """The answer a read of `hits` (numbered from 1) gives, with the findings it rests on. The
    calculation is used when the question asks for one (`asks_calculation`), or may ask for one
    (`may_ask_calculation`) and the answer is not printed; else the answer. An answer written as arithmetic
    (`written_expression`: "1.949 + 1.987 + 1.747") is the calculation when none is given, and never stands
    as written: computed when the question asks for a calculation, refused when it does not. With `repair` (the
    small-model repairs, `programs.repairs`), a sentence that answers "in what year" is its
    `stated_year`, and an answer to a yes/no question begins with its `yes_or_no` ("Yes. Adobe has
    an improving ...")."""
    cited = [hits[n - 1] for n in dict.fromkeys(sources) if 1 <= n <= len(hits)]
    read = cited + [hit for hit in hits if hit not in cited]
    written = written_expression(answer)
    calculation = calculation if is_calculation(calculation) else written  # the calculation written as the answer
    calculated = bool(calculation)
    if calculated and asks_calculation(question):
        return computed_answer(question, calculation, read)
    stated = _stated((repair and stated_year(question, answer)) or answer.strip(), read, cited, asks_count(question))
    if repair and (verdict := yes_or_no(question, stated.answer)) and not re.match(r"(?:yes|no)\b", stated.answer, re.IGNORECASE):
        stated.answer = f"{verdict}. {stated.answer}"
    if not stated.problem and restates(question, stated.answer):
        stated.problem = "the answer only restates the question"
    if written:
        stated.problem = "the answer is an arithmetic expression, not its value"
    if stated.problem and calculated and may_ask_calculation(question):
        computed = computed_answer(question, calculation, read)
        return stated if computed.problem else computed
    return stated


def _stated(answer: str, read: list[dict], cited: list[dict], counted: bool = False) -> PassageAnswer:
    """The answer as written: its numbers, else its words, printed in the passages read; a whole number that
    answers how many (`counted`) and is printed in none is the reader's count of what its cited passages show, a
    derived value that code's own count grounds or nothing does (`grounding`: "How many years did X exceed
    $5,000 million?")."""
    if not answer:
        return PassageAnswer("", problem="no answer")
    if len(answer.split()) > COPIED_WORDS and (printed := _quoted_text(answer, read)):
        return PassageAnswer(answer, [printed], problem="the answer copies a passage instead of answering")
    if numbers := answer_numbers(answer):
        found = [_quoted_number(number, read) for _, number in numbers]
        missing = [text for (text, _), finding in zip(numbers, found) if finding is None]
        if missing and counted and cited and len(numbers) == 1 and numbers[0][1].is_integer():
            return PassageAnswer(answer, [_whole(hit) for hit in cited], [numbers[0][1]], whole_passages=True)
        if missing:
            return PassageAnswer(answer, [f for f in found if f], problem=f"{', '.join(missing)} not printed in the passages read")
        return PassageAnswer(answer, _distinct(found))
    if printed := _quoted_text(answer, read):
        return PassageAnswer(answer, [printed])
    if not cited:
        return PassageAnswer(answer, problem="no passage cited")
    return PassageAnswer(answer, [_whole(hit) for hit in cited], whole_passages=True)


def computed_answer(question: str, calculation: str, read: list[dict], constants: Collection[float] = ()) -> PassageAnswer:
    """The calculation's result as the answer, each operand a finding where `read` prints it (module rules);
    `constants` are the calculation's own numbers, never quoted, as many times as it writes each (a metric's
    "* 100", an average's "/ 3", written in code: a "(3)" footnote mark is not its operand)."""
    try:
        computation = compute(calculation)
    except ExpressionError as error:
        return PassageAnswer("", problem=f"the calculation could not be computed: {error}")
    years = {int(year) for year in YEAR.findall(question)}
    given = {number for number in numbers_in(question) if number not in years}  # "DPO = 365 * ..."
    if used := list(dict.fromkeys(o.text for o in computation.literals if o.value in years)):
        return PassageAnswer("", problem=f"the calculation uses the question's year {', '.join(used)} as a value")
    found, missing = [], []
    own = Counter(constants)  # each written once per time the calculation writes it: an operand may equal one
    own.subtract(computation.operands[at].value for at in computation.structural)  # `literals` leaves these out already
    for operand in computation.literals:
        if own[operand.value] > 0:
            own[operand.value] -= 1
            continue
        finding = _quoted_number(operand.value, read, scaled=False)
        if finding is None and (operand.value in CONSTANTS or operand.value in given):
            continue
        (found if finding else missing).append(finding or operand.text)
    result = PassageAnswer(format_result(computation.value), _distinct(found), [computation.value],
                           computation.expression)
    if missing:
        result.problem = f"the calculation uses {', '.join(dict.fromkeys(missing))}, which no passage read prints"
    return result


def _quoted_number(number: float, read: list[dict], scaled: bool = True) -> Finding | None:
    """The first place among the passages where `number` is printed (any sign), at any scale unless
    `scaled` is False (an operand is copied as printed, "60.3" of "$60.3 million" too, and "3" in "Note 3" is
    not 3,000), as a finding: printed exactly, else the closest within TOLERANCE. Of a row's 81,731 and
    81,912, the operand 81912 (or 81910) is the second cell, not the first within half a percent."""
    value, scales = abs(number), SCALES if scaled else (1.0,)

    def distance(printed: float) -> float:
        """How far `printed` is from the number, relatively, at its nearest scale."""
        return min(abs(x * scale - y) / y if y else abs(x * scale) for scale in scales
                   for x, y in ((printed, value), (value, printed)))

    spans = [(min(distance(abs(printed)), distance(abs(face_value(hit["text"][start:end]) or printed))), hit, start, end)
             for hit in read for start, end, printed in number_spans(hit["text"])]
    best = min(spans, key=lambda span: span[0], default=None)  # the first of the nearest
    return _finding(*best[1:]) if best and best[0] <= TOLERANCE else None


def _quoted_text(answer: str, read: list[dict]) -> Finding | None:
    """The answer (without a leading article or final period) printed in a passage, case and spacing aside."""
    words = ARTICLE.sub("", answer.strip().rstrip(".")).split()
    if not words:
        return None
    pattern = re.compile(r"\b" + r"\s+".join(map(re.escape, words)) + r"(?!\w)", re.IGNORECASE)
    for hit in read:
        if match := pattern.search(hit["text"]):
            return _finding(hit, match.start(), match.end())
    return None


def _finding(hit: dict, start: int, end: int) -> Finding:
    text = hit["text"]
    before, after = text[max(0, start - QUOTE_CHARS):start], text[end:end + QUOTE_CHARS]
    return Finding(label=hit.get("section") or hit["doc_id"], value=text[start:end].strip(), doc_id=hit["doc_id"],
                   page=hit["page"], section=hit.get("section") or "",
                   context=" ".join(f"{before}{text[start:end]}{after}".split()))


def _whole(hit: dict) -> Finding:
    """A cited passage as a finding: its text as the page prints it (the longest run a snippet shows whole: not the
    table's head it shows above "…" and the rows it shows below), or a table row's label (the page prints its cells
    apart from it)."""
    text = hit["text"].strip(GAP).strip()
    printed = max(text.split(GAP), key=len).strip()
    return Finding(label=hit.get("section") or hit["doc_id"], value=hit.get("label") or printed, doc_id=hit["doc_id"],
                   page=hit["page"], section=hit.get("section") or "", context=text)


def _distinct(findings: list[Finding | None]) -> list[Finding]:
    return list({(f.doc_id, f.page, f.value, f.context): f for f in findings if f is not None}.values())
