"""Scripted readers: the iterative program run whole, with every LM step answered by code that knows the
example's gold answer (`ferret eval --reader oracle|wrong`). No LM; seconds a question.

They bound what a user's own LM gets from the program: the code rungs, retrieval, hops, grounding and
`accept` run unchanged, as for any LM other than the embedded one (the small-model profile is off: the
reader's model is "scripted/...").

- `oracle`: a read (ReadPassages), an extraction or Synthesis states the gold answer the way a capable LM
  writes it, citing the shown passages (results, findings) that hold it: a number as printed, with the
  gold's scale word (thousand, million, billion) or "%"; a gold that is not printed as its calculation over
  printed operands (TAT-QA's derivation; else the first of a few two-operand forms over the numbers of
  the evidence passages shown that gives it); a text answer as the gold's words (a sentence-long gold as its
  first sentence, on an evidence passage); a yes/no as "Yes" or "No", once a passage of every evidence
  document or page was shown, or as the gold's first sentence when that states the two figures the verdict
  rests on, each with its period, and what was shown prints them. When nothing shown holds it, it says what
  is missing.
- `wrong`: the same steps, stating a wrong value of the gold's kind printed in what it was shown (another
  number, another name: `grounding_check.distractor`; the opposite verdict, on the gold's two figures read in
  each other's period when it states them; the other of two names a question offers), and citing where it
  is printed.
- Both confirm what they state (ConfirmAnswer: yes); the Router, Planner and Rerank answer as the
  program's defaults (`RouteDecision()`, no subqueries, the order found); the extraction agent reads its
  results without calling a tool.

Each question runs inside `reading(example)`, which records what the reader saw (`Reading`): whether a
passage of the gold evidence was ever shown (`evidence_shown`: the retrieval bound) and whether the reader
stated its answer in some step (`stated`). `reader_summary` turns the rows of a run into the bounds: stated
right, and the right answers refused by reason.

The wrong reader's choice among the values printed is random, seeded by the question and a seed; one draw over
a split of 40 questions moves its figure by a few hundredths, so `ferret eval --reader wrong --seeds N` asks
each question under seeds 0 to N-1 and reports the means.
"""
from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import dspy

from ferret.corpus.numbers import SCALE_NAMES, YEAR, number_spans, parse_value, stated_figures
from ferret.corpus.words import first_sentence, stems
from ferret.optimizers.grounding_check import distractor
from ferret.optimizers.metrics import SENTENCE_GOLD, answer_correct, gold_items, gold_value, normalize, number_found
from ferret.programs.arithmetic import Computation, ExpressionError, compute, format_result
from ferret.programs.code_engine import CodeEngine
from ferret.programs.hops import offered
from ferret.programs.passage_answer import asks_count
from ferret.programs.verify import same_number

READERS = ("oracle", "wrong")
CODE_RUNGS = ("table", "structured", "comparison", "table_calculation")  # answers computed in code, no read
MAX_OPERANDS = 40  # numbers of the evidence passages tried as a two-operand calculation's operands
FORMS = ("{a} - {b}", "{a} + {b}", "{a} / {b}", "({a} - {b}) / {b} * 100", "{a} / {b} * 100", "({a} + {b}) / 2")
_OPERAND = re.compile(r"\d[\d,]*(?:\.\d+)?")
_EXPRESSION = re.compile(r"^[-+*/()0-9.,%$ ]{1,100}$")
_PASSAGE = re.compile(r"^\[(\d+)\] (?:(.*) )?page (\d+) \((.*?)\): (.*)$", re.S)
_RESULT = re.compile(r"^\[(\d+)\] doc_id=(.*?) page=(\d+) section=(.*?) node=\S+\n(.*)", re.S)
_FINDING = re.compile(r"^\[(\d+)\] (.*) \((.*) p\. (\d+)\) \"(.*)\"$", re.S)
_SCALE_WORD = re.compile(r"\b(?:thousand|million|billion|trillion|bn|mn)s?\b", re.IGNORECASE)
_YES_NO = re.compile(r"^\s*(?:yes|no)\b", re.IGNORECASE)
_OPERATOR = re.compile(r"\d\s*[-+*/×÷]\s*[(\d]")  # between two numbers: a derivation that calculates


@dataclass
class Shown:
    """One passage (result, finding) an LM step was shown: its [number], where it is printed, its text."""
    number: int
    doc_id: str
    page: int
    section: str
    text: str


@dataclass
class Stated:
    answer: str
    sources: list[int]
    calculation: str = ""


@dataclass
class Reading:
    """What a scripted reader saw and said over one question."""
    example: dspy.Example
    rng: random.Random
    evidence_shown: bool = False
    stated: bool = False

    def is_evidence(self, shown: Shown) -> bool:
        for item in self.example.get("evidence") or []:
            if item["doc_id"] == shown.doc_id and item.get("page") in (None, shown.page):
                return True
        return False


_READING: ContextVar[Reading | None] = ContextVar("ferret_reading", default=None)


@contextmanager
def reading(example: dspy.Example, seed: int = 0) -> Iterator[Reading]:
    """The scripted readers answer `example` inside this context (a wrong reader's choices seeded by its id)."""
    record = Reading(example, random.Random(f"{seed}:{example.id}"))
    token = _READING.set(record)
    try:
        yield record
    finally:
        _READING.reset(token)


def reader_lm(kind: str, seed: int = 0) -> dspy.LM:
    """The scripted reader `kind` ("oracle" or "wrong") as a dspy.LM; `seed`: the wrong reader's random choice
    among the wrong values printed (`reading`)."""
    if kind not in READERS:
        raise ValueError(f"unknown reader {kind!r}; readers: {', '.join(READERS)}")
    return dspy.LM(f"scripted/{kind}", engine=ReaderEngine(kind, seed), cache=False)


class ReaderEngine(CodeEngine):
    def __init__(self, kind: str, seed: int = 0):
        self.kind, self.seed = kind, seed

    def reply(self, step: str, inputs: dict[str, str], prompt: str) -> dict:
        record = _READING.get()
        if record is None:
            raise RuntimeError("a scripted reader answers a question inside `scripted_readers.reading(example)`")
        question = record.example.question
        if step == "read":
            shown = [_passage(text, record.example.get("doc_id")) for text in json.loads(inputs["passages"])]
            said = self._said(record, question, [s for s in shown if s])
            if said is None:
                return {"calculation": {"expression": ""}, "answer": "", "sources": [], "missing": "not in these passages"}
            return {"calculation": {"expression": said.calculation}, "answer": said.answer, "sources": said.sources,
                    "missing": ""}
        if step == "extract":
            shown = [s for block in re.split(r"\n\n(?=\[\d+\] doc_id=)", inputs.get("results", "")) if (s := _result(block))]
            said = self._said(record, question, shown, printed_only=True)
            if said is None:
                return {"findings": [], "sections_searched": [], "failure_reason": "the results do not hold it"}
            hit = next(s for s in shown if s.number == said.sources[0])
            return {"findings": [{"label": inputs.get("shopping_item", question)[:80], "value": said.answer,
                                  "doc_id": hit.doc_id, "page": hit.page, "section": hit.section[:80],
                                  "context": _around(hit.text, said.answer)}], "sections_searched": [], "failure_reason": ""}
        if step in ("evaluate", "synthesize"):
            shown = [s for text in json.loads(inputs["findings"]) if (s := _finding(text))]
            said = self._said(record, question, shown, printed_only=True)
            if step == "evaluate":
                return {"answered": said is not None, "valid_findings": said.sources if said else [],
                        "resolved_subqueries": [], "reason": "" if said else "they do not give it"}
            last = inputs.get("last_chance", "").strip().lower() == "true"
            status = "answer" if said else "fail" if last else "needs"
            return {"status": status, "answer": said.answer if said else "", "sources": said.sources if said else [],
                    "confidence": 1.0 if said else 0.0, "need": "", "need_reason": "" if said else "not in the findings",
                    "clarification": ""}
        defaults = {"route": {"decision": {}}, "confirm": {"answers_question": True}, "plan": {"subqueries": []},
                    "rerank": {"ranking": []},
                    "act": {"next_thought": "I read the results.", "next_tool_name": "finish", "next_tool_args": {}}}
        if step not in defaults:
            raise ValueError(f"a scripted reader does not answer the {step!r} step")
        return defaults[step]

    def _said(self, record: Reading, question: str, shown: list[Shown], printed_only: bool = False) -> Stated | None:
        record.evidence_shown |= any(record.is_evidence(s) for s in shown)
        said = (oracle_answer if self.kind == "oracle" else wrong_answer)(record, shown, printed_only)
        record.stated |= said is not None
        return said


def cited(record: Reading, shown: list[Shown], holding: Shown) -> list[int]:
    """What a capable reader cites for a value: the passage that holds it, then the other evidence passages it
    was shown (the bridge of a multi-hop answer, the other side of a comparison)."""
    return list(dict.fromkeys([holding.number, *(s.number for s in shown if record.is_evidence(s))]))


def oracle_answer(record: Reading, shown: list[Shown], printed_only: bool = False) -> Stated | None:
    """The gold answer as a capable reader states it from `shown` (module rules), or None when they do not hold it;
    `printed_only`: only a value printed in one of them (an extraction, Synthesis), no calculation."""
    example = record.example
    items = gold_items(example)
    evidence = [s for s in shown if record.is_evidence(s)]
    if _verdict(items):
        wanted = {(item["doc_id"], item.get("page")) for item in example.get("evidence") or []}
        covered = {(s.doc_id, page) for s in evidence for page in (s.page, None)}
        return Stated(_figured(items[0], evidence) or items[0].split()[0].strip(".,").capitalize(), [s.number for s in evidence]) \
            if evidence and wanted <= covered and not printed_only else None
    value = gold_value(items[0], example) if len(items) == 1 else None
    if value is not None:
        printed = [] if value.number == 0 else sorted(shown, key=lambda s: not record.is_evidence(s))  # 0.4 rounds to 0
        for passage in printed:
            for start, end, _ in number_spans(passage.text):
                if number_found(value, items[0], passage.text[start:end]):
                    return Stated(_with_scale(passage.text[start:end], value.scale, example), cited(record, shown, passage))
        return None if printed_only else _counted(example, value.number, evidence) or _calculated(example, shown, evidence)
    found = []
    for item in items:
        written = len(item.split()) > SENTENCE_GOLD  # a sentence-long gold
        lead = first_sentence(item) if written else item
        holding = sorted((s for s in shown if f" {normalize(item)} " in f" {normalize(s.text)} "),
                         key=lambda s: not record.is_evidence(s))
        if not holding and written and not printed_only:
            holding = evidence  # a sentence-long gold is the evidence's gist, not its words
        if not holding:
            return None
        found.append((_as_printed(lead, holding[0].text) if lead == item else lead, holding[0]))
    sources = [number for _, passage in found for number in cited(record, shown, passage)]
    return Stated(", ".join(lead for lead, _ in found), list(dict.fromkeys(sources)))


def wrong_answer(record: Reading, shown: list[Shown], printed_only: bool = False) -> Stated | None:
    """A wrong value of the gold's kind printed in `shown`, cited where it is printed; the opposite verdict for a
    yes/no gold, the other name for a choice the question offers ("Which is older, A or B?"); None when nothing
    shown prints one."""
    example = record.example
    items = gold_items(example)
    if _verdict(items):
        verdict = "No" if items[0].lower().startswith("yes") else "Yes"
        if figured := _figured(items[0], shown):  # the gold's two figures, read in each other's period
            (a, b), _ = stated_figures(figured)
            verdict = _YES_NO.sub(verdict, figured[:a.start] + b.printed + figured[a.start + len(a.printed):b.start]
                                  + a.printed + figured[b.start + len(b.printed):], count=1)
        evidence = [s.number for s in shown if record.is_evidence(s)]
        return None if printed_only or not shown else Stated(verdict, evidence or [shown[0].number])
    gold = " and ".join(items)
    options = offered(example.question)  # "Which is older, A or B?": the other one
    if len(chosen := [option for option in options if stems(option) & stems(gold)]) == 1:
        other = next(option for option in options if option != chosen[0])
        holding = [passage for passage in shown if other.lower() in passage.text.lower()]
        return Stated(other, cited(record, shown, holding[0])) if holding else None
    for passage in shown:
        if other := distractor(example.question, gold, passage.text, record.rng):
            value = gold_value(items[0], example) if len(items) == 1 else None
            return Stated(_with_scale(other, value.scale, example) if value else other, cited(record, shown, passage))
    return None


def _counted(example: dspy.Example, number: float, evidence: list[Shown]) -> Stated | None:
    """A count the reader counted ("How many years did X exceed $5,000 million?" → "2"), stated as a number
    citing the evidence passages shown, when the question asks how many, the gold is a whole number and no
    calculation gives it (a derivation that lists the items counted, "2020##2019", is none)."""
    if not (asks_count(example.question) and number.is_integer() and evidence) \
            or _OPERATOR.search(str(example.get("derivation") or "")):
        return None
    return Stated(f"{number:.0f}", [s.number for s in evidence])


def _calculated(example: dspy.Example, shown: list[Shown], evidence: list[Shown]) -> Stated | None:
    """The gold as a calculation over printed numbers: its derivation when the dataset gives one and every
    operand is printed in `shown`, else the first two-operand form over the evidence passages' numbers giving it."""
    derivation = str(example.get("derivation") or "").replace("×", "*").replace("÷", "/").strip()
    if derivation and _EXPRESSION.match(derivation):
        # TAT-QA may write a percentage as its ratio, a reader as the percentage; the numbers a reader's
        # calculation takes from the page are its operands as the program reads them (no average's count)
        computed = next((found for form in (derivation, f"({derivation}) * 100")
                         if _gives_gold(example, found := _computed(form))), None)
        if computed is None:
            return None
        derivation, operands = computed.expression, [operand.value for operand in computed.literals]
        holding = [s.number for s in shown if any(same_number(abs(n), abs(o)) for _, _, n in number_spans(s.text)
                                                 for o in operands)]
        printed = all(any(same_number(abs(n), abs(o)) for s in shown for _, _, n in number_spans(s.text)) for o in operands)
        return Stated("", holding, derivation) if printed and holding else None
    spans = list(dict.fromkeys((printed, s.number) for s in evidence for start, end, _ in number_spans(s.text)
                               if _OPERAND.fullmatch(printed := s.text[start:end].strip("$ "))))[:MAX_OPERANDS]
    for (a, first), (b, second) in itertools.permutations(spans, 2):
        for form in FORMS:
            if _gives_gold(example, found := _computed(form.format(a=a, b=b))):
                return Stated("", list(dict.fromkeys((first, second))), found.expression)
    return None


def _computed(expression: str) -> Computation | None:
    try:
        return compute(expression)
    except ExpressionError:
        return None


def _gives_gold(example: dspy.Example, computed: Computation | None) -> bool:
    return computed is not None and answer_correct(example, dspy.Prediction(status="answer",
                                                                            answer=format_result(computed.value)))


def _as_printed(item: str, text: str) -> str:
    """`item`, a text without numbers, as `text` prints it, when it does with other case, articles or punctuation
    ("Developed Rest of World" for a gold "Developed Rest of the World": a reader copies the page); else `item`
    (a number's sign, currency and percent are the punctuation the words leave out)."""
    words = [] if re.search(r"\d", item) else normalize(item).split()
    if not words:
        return item
    gap = r"(?:\W+(?:a|an|the)\b)*\W+"
    article = r"(?:(?:a|an|the)\s+)?" if re.match(r"\s*(?:a|an|the)\b", item, re.IGNORECASE) else ""
    match = re.search(r"(?<!\w)" + article + gap.join(map(re.escape, words)) + r"(?!\w)", text, re.IGNORECASE)
    return match[0] if match else item


def _figured(gold: str, shown: list[Shown]) -> str:
    """The first sentence of a yes/no gold, as a capable reader writes its verdict, when it states the two figures
    it rests on, each with its period ("Yes, net earnings as a percent of sales increased from 20% in Q2 of FY2022
    to 20.1% in Q2 of FY2023."), and `shown` prints them; "" otherwise (the verdict is then stated bare)."""
    sentence = first_sentence(gold)
    figures, _ = stated_figures(sentence)
    printed = [number for s in shown for _, _, number in number_spans(s.text)]
    return sentence if len(figures) == 2 and figures[0].period != figures[1].period and all(
        any(same_number(abs(figure.value), abs(number)) for number in printed) for figure in figures) else ""


def _verdict(items: list[str]) -> bool:
    return len(items) == 1 and normalize(items[0]).split()[:1] in (["yes"], ["no"])


def _with_scale(span: str, scale: float, example: dspy.Example) -> str:
    """A printed number as a capable reader states it: with the gold's scale word, or "%" for a percentage; one that
    prints its own unit as printed ("$2.1 billion" is no percentage, "43%" no millions)."""
    span = span.strip()
    if YEAR.fullmatch(span) or "%" in span:
        return span
    if str(example.get("scale") or "").lower() == "percent":
        return span if parse_value(span).unit or _SCALE_WORD.search(span) else f"{span}%"
    word = SCALE_NAMES.get(scale)
    return f"{span} {word}" if word and not _SCALE_WORD.search(span) else span


def _around(text: str, value: str) -> str:
    at = max(text.find(value.split()[0]), 0)
    return " ".join(text[max(at - 50, 0):at + 70].split())


def _passage(text: str, doc_id: str | None) -> Shown | None:
    """A read's passage ("[n] DOC page P (SECTION): TEXT"; inside one document without its id)."""
    match = _PASSAGE.match(text)
    if match is None:
        return None
    return Shown(int(match[1]), match[2] or doc_id or "", int(match[3]), match[4], match[5])


def _result(block: str) -> Shown | None:
    """A search result as an extraction reads it ("[n] doc_id=DOC page=P section='S' node=N" and its text)."""
    match = _RESULT.match(block.strip())
    return Shown(int(match[1]), match[2], int(match[3]), match[4].strip("'\""), match[5]) if match else None


def _finding(line: str) -> Shown | None:
    """A finding as Synthesis reads it ("[n] LABEL: VALUE UNIT (DOC p. P) \"CONTEXT\""): its value is its text."""
    match = _FINDING.match(line.strip())
    if match is None:
        return None
    value = match[2].rpartition(": ")[2]
    return Shown(int(match[1]), match[3], int(match[4]), "", value)


def reader_summary(rows: list[dict], kind: str) -> dict:
    """A scripted reader run's bounds over its rows: stated right; how often a passage of the gold evidence was
    shown to some step (`evidence_shown`: for evidence that is a whole document, every question that reached a
    read), and how often the reader stated its answer in some step or a code rung answered before any
    (`answer_shown`: the oracle's is the retrieval bound, what any reader could state); for the oracle, its right answers
    not stated, by reason: never shown, not grounded (a verified answer refused: it is the unconfirmed
    candidate), not verified, pre-empted by a code rung (which stated a wrong answer), or stated and scored
    wrong; for the wrong reader, wrong answers stated. Rows of several seeds (`seeds`) are averaged together."""
    n = len(rows) or 1
    right = [row for row in rows if row["accuracy"] == 1.0]
    summary = {"reader": kind, "seeds": len({row["reader_seed"] for row in rows}), "stated_right": round(len(right) / n, 4),
               "evidence_shown": round(sum(row["evidence_shown"] for row in rows) / n, 4),
               "answer_shown": round(sum(row["reader_stated"] or row["answered_by"] in CODE_RUNGS for row in rows) / n, 4),
               "wrong_stated": round(sum(row["status"] == "answer" and row["accuracy"] != 1.0 for row in rows) / n, 4)}
    if kind == "oracle":
        refused = {"not_shown": 0, "not_grounded": 0, "not_verified": 0, "preempted": 0, "scored_wrong": 0}
        for row in rows:
            if row["accuracy"] == 1.0:
                continue
            if row["status"] == "answer":
                refused["preempted" if row["answered_by"] in CODE_RUNGS else "scored_wrong"] += 1
            elif not row["reader_stated"]:
                refused["not_shown"] += 1
            else:
                refused["not_grounded" if row["result"].get("candidate") else "not_verified"] += 1
        summary.update({f"refused_{reason}": round(count / n, 4) for reason, count in refused.items()})
    return summary
