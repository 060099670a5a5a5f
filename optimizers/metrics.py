"""Evaluation metrics: DSPy-optimizer-compatible functions `(example, pred, trace=None) -> float`.

Answer metrics score 0.0 unless the program answered (status "answer", non-empty answer): a refusal,
a request for input or a failure is wrong. The exception is a question labelled with an
`expected_status` other than "answer" (the sample set's absent and ambiguous questions): it is answered
correctly by ending in that status ("fail", "clarify"). `answer_correct` decides by the kind of gold,
and a list gold (TAT-QA, the sample set's enumerations) needs every item matched, each item as a
phrase anywhere in the answer, however long:

- Numeric gold (one number: "$1577.00", "(3.2)%", 24.26, "150 million"): the value the answer states
  (`stated_values`: a calculation's result or a label's value, after its last "=" or ":", else the one
  number of its first sentence or of the answer, years and the question's own numbers aside), rounded
  to the gold's printed decimals, equals it ("0.664" matches "0.66"; "24.3" and "$1.58 billion" do not
  match 24.26 and "$1577.00"; "6577 + 6332 = 12,909" does not match 6,577, nor does an answer listing
  several candidate values one of which is the gold). A gold whose decimals are all zeros is a whole number
  printed with cents, itself rounded (FinanceBench's "$382.00" for a cash flow of $381,603 thousand): an
  answer that rounds to it as a whole number, within 0.5 % of it, matches too ("381.603"; not "1.4" for
  "1.00"). An item of a list gold may be any number of the answer. The gold's scale is its own scale
  word, else TAT-QA's `scale`, else the units the question asks for ("Answer in USD millions"); the
  answer may give the number in those units with or without the scale word ("1,577", "1,577 million",
  "$1.577 billion"; not "1,577 thousand"). Signs must agree, but a negative gold also matches its magnitude in an answer that words a
  decrease ("down 3.2%" for "(3.2)%"). Number words ("four") are not read.
- Yes/no gold ("no", "No. Microsoft decreased its debt ..."): the answer's first yes/no word must agree;
  the rest of such a gold is justification and is not checked.
- Other text, SQuAD-normalised: exact match, or the gold as a whole phrase in a short answer (at most
  SHORT_ANSWER words). A sentence gold (more than SENTENCE_GOLD words: FinanceBench explanations) is
  judged by its first sentence: every number in it must be in the answer (same_number: any scale,
  0.5 %; years 1900-2100 ignored on both sides); without numbers, token F1 >= F1_THRESHOLD. That is a
  lexical proxy: judge free-text golds with `make_judge_metric`. An empty gold (SciFact: retrieval only)
  is never matched.
"""
from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Callable

import dspy
from dspy.utils.exceptions import AdapterParseError

from ferret.corpus.numbers import detect_scale, numbers_in, parse_value
from ferret.corpus.records import Value
from ferret.corpus.words import first_sentence
from ferret.programs.lm import answering
from ferret.programs.verify import TOLERANCE, same_number
from ferret.signatures.judge import JudgeAnswer

SHORT_ANSWER = 30
SENTENCE_GOLD = 5
F1_THRESHOLD = 0.5
_DECREASE = re.compile(r"\b(?:decreas|declin|drop|fell|fall|lower|loss|lost|reduc|negative|outflow|used|down)\w*",
                       re.IGNORECASE)
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


def normalize(text: str) -> str:
    """SQuAD normalisation: lowercase, punctuation and articles removed, single spaces."""
    text = "".join(c for c in str(text).lower()
                   if c not in string.punctuation and not unicodedata.category(c).startswith("P"))
    return " ".join(_ARTICLES.sub(" ", text).split())


def _answer(pred: dspy.Prediction) -> str:
    """The predicted answer, or "" when the program did not answer."""
    return (pred.get("answer") or "").strip() if pred.get("status") == "answer" else ""


def gold_items(example: dspy.Example) -> list[str]:
    gold = example.answer
    return [str(item) for item in gold] if isinstance(gold, list) else [str(gold)]


def gold_value(item: str, example: dspy.Example) -> Value | None:
    """The gold item as a number with its scale (see the module rules), or None for a text gold."""
    scale = example.get("scale") or ""
    declared = detect_scale(f"(in {scale}s)" if scale else example.get("question") or "")[0]
    value = parse_value(item, scale=declared)
    return value if value.number is not None else None


def text_gold(example: dspy.Example) -> bool:
    """Whether the gold answer is text: none of its items is a number (with a unit or scale) as a whole."""
    return all(gold_value(item, example) is None for item in gold_items(example))


def number_found(value: Value, item: str, answer: str, stated: list[float] | None = None) -> bool:
    """A number of the answer (of `stated`, when given), in the gold's printed units, rounds to the gold
    at its printed decimals."""
    printed = value.number / value.scale
    decimals = len(match[1]) if (match := re.search(r"\.(\d+)", item)) else 0
    half_unit = 0.5 * 10 ** -decimals * (1 + 1e-6)
    if match and not match[1].strip("0"):  # "$382.00": a whole number printed with cents, itself rounded
        half_unit = max(half_unit, min(0.5, TOLERANCE * abs(printed)))
    decrease = printed < 0 and _DECREASE.search(answer)
    for number in numbers_in(answer) if stated is None else stated:
        number = -number if decrease and number > 0 else number
        if any(abs(stated - printed) <= half_unit for stated in (number / value.scale, number)):
            return True
    return False


def stated_values(answer: str, question: str, years: bool = False) -> list[float]:
    """The one value an answer states, as a list ([] when it states none or several): a calculation's
    result or a label's value (what follows its last "=" or ":"), else the one number of its first
    sentence, else of the whole answer, with years (unless `years`: the gold is one) and the question's
    own numbers set aside; when that leaves none, a question's number the answer restates."""
    if numbers_in(result := re.split(r"[=:]", answer)[-1]):  # "a + b = c", "Sum of Amount over 11 rows: 8,417.43"
        answer = result
    asked = numbers_in(question)

    def values(text: str, besides_asked: bool = True) -> list[float]:
        found = [n for n in numbers_in(text) if (years or not _is_year(n))
                 and not (besides_asked and any(same_number(n, q) for q in asked))]
        return list(dict.fromkeys(found))

    for text in (first_sentence(answer), answer):
        if found := values(text):
            return found if len(found) == 1 else []
    found = values(answer, besides_asked=False)
    return found if len(found) == 1 else []


def _text_found(item: str, answer: str, in_list: bool = False) -> bool:
    gold, said = normalize(item), normalize(answer)
    if not gold:
        return False
    if gold.split()[:1] in (["yes"], ["no"]):
        return next((word for word in said.split() if word in ("yes", "no")), None) == gold.split()[0]
    if gold == said or ((in_list or len(said.split()) <= SHORT_ANSWER) and f" {gold} " in f" {said} "):
        return True
    if len(gold.split()) <= SENTENCE_GOLD:
        return False
    lead = first_sentence(item)
    if numbers := _not_years(lead):
        stated = _not_years(answer)
        return all(any(same_number(abs(s), abs(n)) for s in stated) for n in numbers)
    return _f1(normalize(lead), said) >= F1_THRESHOLD


def _is_year(number: float) -> bool:
    return number.is_integer() and 1900 <= number <= 2100


def _not_years(text: str) -> list[float]:
    return [n for n in numbers_in(text) if not _is_year(n)]


def _missed(example: dspy.Example, answer: str) -> list[str]:
    """The gold items the answer does not match: a single number by the value the answer states
    (`stated_values`), each item of a list anywhere in the answer."""
    missed, items = [], gold_items(example)
    for item in items:
        value = gold_value(item, example)
        if value is None:
            found = _text_found(item, answer, len(items) > 1)
        else:
            stated = stated_values(answer, example.get("question") or "", _is_year(value.number)) if len(items) == 1 else None
            found = number_found(value, item, answer, stated)
        if not found:
            missed.append(item)
    return missed


def answer_correct(example: dspy.Example, pred: dspy.Prediction, trace=None) -> float:
    """1.0 when the program answered and the answer matches every gold item, or when it ended in the
    question's `expected_status` other than "answer" (rules in the module doc)."""
    expected = example.get("expected_status") or "answer"
    if expected != "answer":
        return float(pred.get("status") == expected)
    answer = _answer(pred)
    return float(bool(answer) and not _missed(example, answer))


def _f1(gold: str, said: str) -> float:
    common = sum((Counter(gold.split()) & Counter(said.split())).values())
    if not common:
        return 0.0
    precision, recall = common / len(said.split()), common / len(gold.split())
    return 2 * precision * recall / (precision + recall)


def token_f1(example: dspy.Example, pred: dspy.Prediction, trace=None) -> float:
    """SQuAD token F1 of the answer against the gold (list items joined); 0.0 without an answer."""
    answer = _answer(pred)
    return _f1(normalize(" ".join(gold_items(example))), normalize(answer)) if answer else 0.0


def exact_match(example: dspy.Example, pred: dspy.Prediction, trace=None) -> float:
    """1.0 when the SQuAD-normalised answer equals the normalised gold (list items joined)."""
    answer = _answer(pred)
    return float(bool(answer) and normalize(answer) == normalize(" ".join(gold_items(example))))


def answered(example: dspy.Example, pred: dspy.Prediction, trace=None) -> float:
    """1.0 when the status is "answer" and the answer is not empty."""
    return float(bool(_answer(pred)))


def citations_verified(example: dspy.Example, pred: dspy.Prediction, trace=None) -> float:
    """1.0 when the program answered with at least one citation and its citations verified."""
    return float(bool(_answer(pred) and pred.get("citations") and pred.get("citations_verified")))


def grounded(example: dspy.Example, pred: dspy.Prediction, trace=None) -> float:
    """1.0 when the program answered with its answer grounded (`programs.grounding`: the value's row,
    column or sentence is the question's)."""
    return float(bool(_answer(pred)) and pred.get("grounding") == "grounded")


def candidate_correct(example: dspy.Example, pred: dspy.Prediction, trace=None) -> float:
    """`answer_correct` of the answer, or of the unconfirmed candidate a program did not state (the
    answer's accuracy had every candidate been stated; the risk-coverage curve's full coverage)."""
    if not _answer(pred) and pred.get("candidate"):
        pred = dspy.Prediction(**{**dict(pred.items()), "status": "answer", "answer": pred.candidate})
    return answer_correct(example, pred)


def _evidence(example: dspy.Example, pred: dspy.Prediction, k: int | None) -> tuple[set, list]:
    """(gold keys, first k distinct predicted keys): (doc_id, page) for page evidence, doc_id for passages."""
    gold = example.get("evidence") or []
    by_page = any("page" in item for item in gold)

    def key(item: dict):
        return (item["doc_id"], item.get("page")) if by_page else item["doc_id"]

    return {key(item) for item in gold}, list(dict.fromkeys(key(item) for item in pred.get("evidence") or []))[:k]


def evidence_recall(example: dspy.Example, pred: dspy.Prediction, trace=None, k: int = 5) -> float:
    """Share of the gold evidence among the first k distinct predicted items (0.0 without gold evidence)."""
    gold, ranked = _evidence(example, pred, k)
    return len(gold & set(ranked)) / len(gold) if gold else 0.0


def evidence_all(example: dspy.Example, pred: dspy.Prediction, trace=None, k: int = 5) -> float:
    """1.0 when all the gold evidence is among the first k distinct predicted items."""
    gold, ranked = _evidence(example, pred, k)
    return float(bool(gold) and gold <= set(ranked))


def evidence_any(example: dspy.Example, pred: dspy.Prediction, trace=None, k: int = 5) -> float:
    """1.0 when some gold evidence is among the first k distinct predicted items."""
    gold, ranked = _evidence(example, pred, k)
    return float(bool(gold & set(ranked)))


def mrr_at_10(example: dspy.Example, pred: dspy.Prediction, trace=None) -> float:
    """1 / rank of the first gold item among the first 10 distinct predicted items, else 0.0."""
    gold, ranked = _evidence(example, pred, 10)
    return next((1 / rank for rank, key in enumerate(ranked, 1) if key in gold), 0.0)


def turn_correct(example: dspy.Example, pred: dspy.Prediction, trace=None) -> float:
    """A conversation turn: a command ("show_more", "export") was read as that command and done; a
    question was answered correctly (`answer_correct`) or ended in its expected status."""
    if (example.get("kind") or "question") != "question":
        return float(pred.get("kind") == example.kind and pred.get("status") == "answer")
    return float(pred.get("kind") == "question") * answer_correct(example, pred)


def rewrite_correct(example: dspy.Example, pred: dspy.Prediction, trace=None) -> float:
    """1.0 when the turn's standalone question names every word group of the gold `mentions` (the
    company, document, metric and year a follow-up leaves out) and none of `absent` (a topic left
    behind), case-insensitively."""
    question = (pred.get("rewritten") or "").lower()
    return float(all(word.lower() in question for word in example.get("mentions") or [])
                 and not any(word.lower() in question for word in example.get("absent") or []))


METRICS: dict[str, Callable[..., float]] = {
    "accuracy": answer_correct,
    "exact_match": exact_match,
    "f1": token_f1,
    "answered": answered,
    "citations_verified": citations_verified,
    "grounded": grounded,
    "candidate_accuracy": candidate_correct,
    "evidence_recall@5": evidence_recall,
    "evidence_recall_all@5": evidence_all,
    "evidence_recall_any@5": evidence_any,
    "mrr@10": mrr_at_10,
}


def make_judge_metric(lm: dspy.LM) -> Callable[..., float]:
    """Accuracy judged by `lm` with JudgeAnswer (JUDGE_PROMPT_VERSION), in the programs' context (JSON adapter);
    answer_correct when the verdict is malformed."""
    judge = dspy.Predict(JudgeAnswer)

    def judged_correct(example: dspy.Example, pred: dspy.Prediction, trace=None) -> float:
        answer = _answer(pred)
        if not answer:
            return 0.0
        gold = "; ".join(gold_items(example)) + (f" ({example.scale})" if example.get("scale") else "")
        try:
            with answering(lm):
                verdict = judge(question=example.question, gold_answer=gold, predicted_answer=answer)
        except AdapterParseError:
            return answer_correct(example, pred)
        return float(verdict.correct)

    return judged_correct


def feedback_metric(example: dspy.Example, pred: dspy.Prediction, trace=None, pred_name=None,
                    pred_trace=None) -> dspy.Prediction:
    """GEPA's metric: score = answer_correct; feedback says what was wrong with the answer, its citations
    and its evidence, and, for the predictor GEPA is improving (`pred_name`), what its step did in this run
    (`_step_feedback`)."""
    score = answer_correct(example, pred)
    answer = _answer(pred)
    notes = []
    if not answer:
        reason = f": {pred.get('reason')}" if pred.get("reason") else ""
        notes.append(f"The program did not answer (status {pred.get('status')!r}{reason}); "
                     f"the gold answer is {'; '.join(gold_items(example))!r}.")
    elif score:
        notes.append("The answer is correct.")
    else:
        stated = ", ".join(_format(n) for n in numbers_in(answer)) or "none"
        for item in _missed(example, answer):
            value = gold_value(item, example)
            if value is None:
                notes.append(f"The answer does not give the gold answer {item!r}.")
            else:
                scaled = f" (= {_format(value.number)})" if value.scale != 1 else ""
                notes.append(f"The gold number {item}{scaled} is missing or off; the answer states: {stated}.")
    failed = [c for c in pred.get("citations") or [] if not c.get("verified")]
    if failed:
        notes.append("Citations that failed verification: "
                     + "; ".join(f"{c.get('doc_id')} p.{c.get('page')} {(c.get('quote') or '')[:80]!r}" for c in failed)
                     + ".")
    elif answer and not pred.get("citations"):
        notes.append("The answer cites no sources.")
    gold, ranked = _evidence(example, pred, None)
    if missing := gold - set(ranked):
        notes.append("Gold evidence not among the retrieved evidence: "
                     + ", ".join(f"{key[0]} p.{key[1]}" if isinstance(key, tuple) else key for key in sorted(missing))
                     + ".")
    if pred_name:
        notes.append(_step_feedback(pred_name, pred))
    return dspy.Prediction(score=score, feedback=" ".join(notes))


STEP_FIELDS = ("answer", "calculation", "status", "reason", "error", "grounding", "findings")


def _step_feedback(pred_name: str, pred: dspy.Prediction) -> str:
    """What the step of predictor `pred_name` ("read.predict" is the step "read") did, from the run's
    trajectory: its last entry's answer, calculation, status, reason, error and grounding; or that it did not
    run and which step answered."""
    step = pred_name.split(".")[0]
    logged = [entry for entry in pred.get("trajectory") or [] if entry.get("step") == step]
    if not logged:
        return f"The {step} step did not run for this question (answered by: {pred.get('answered_by') or 'none'})."
    said = "; ".join(f"{key}: {str(logged[-1][key])[:120]}" for key in STEP_FIELDS if logged[-1].get(key))
    return f"The {step} step ran {len(logged)} time(s); the last time, {said or 'it returned nothing'}."


def _format(number: float) -> str:
    return f"{number:,.0f}" if number == int(number) else f"{number:,.6g}"

# A conversation's turns (`ferret eval --dataset sample-chat`): accuracy is the turn's, commands included.
CHAT_METRICS: dict[str, Callable[..., float]] = {**METRICS, "accuracy": turn_correct, "rewrite_accuracy": rewrite_correct}
