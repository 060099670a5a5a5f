"""Which runs become demos when an optimizer bootstraps them: `demo_metric`, which only scores.

DSPy's BootstrapFewShot (also inside random search and MIPROv2) turns every step of a run whose
answer passed the metric into a demo for that step's predictor. In a run of the looping program
the answer can be right while some steps failed on the way: the first compile of the iterative
program on the embedded model bootstrapped an Extraction demo with no findings ("No findings") and
one whose failure_reason said "The results do not hold the values.", and the compiled program
copied them: 16 of 19 dev questions then failed; a read whose reasoning said "44.1 - 56.7 = 9.6" beside
the right calculation made its compiled program write the model's own arithmetic. So a run passes for
bootstrapping only when its answer is right and stated grounded and every step did its job
(`useful_step`); the metric rejects a run, it never edits the trace (DSPy makes demos of exactly the
steps it recorded, so the compiled state is what ran).
"""
from __future__ import annotations

import dspy

from ferret.corpus.numbers import numbers_in
from ferret.optimizers.metrics import answer_correct
from ferret.programs.arithmetic import ExpressionError, asks_calculation, compute, is_calculation, may_ask_calculation
from ferret.programs.grounding import GROUNDED
from ferret.programs.passage_answer import CONSTANTS
from ferret.programs.structured import grounded
from ferret.programs.verify import same_number, value_on_page
from ferret.signatures.types import Calculation, Finding, RouteDecision


def useful_step(predictor: dspy.Predict, inputs: dict, outputs: dspy.Prediction) -> bool:
    """Whether a step shows its predictor doing its job. An Extraction step (it outputs findings)
    found something, reported no failure, and every finding's value is printed in what it read. A
    first-rung read (it outputs what is missing) answered and said nothing missing, and every number it
    wrote (calculation, answer, reasoning) is printed in its passages or question, a small constant,
    or the result of the calculation it used (see `answer_from_passages`), computed in code: the first
    TAT-QA compile kept a read whose reasoning said "44.1 - 56.7 = 9.6", and its program scored 0.0625
    on 16 dev questions against 0.3125 uncompiled; and it wrote no calculation it did not answer with (the
    TAT-QA compile at 7b63cce kept reads with "795 + 772" beside the answer "795 and 772", and its program
    wrote a subtraction for most dev questions). A Router step (it outputs a decision) read terms that are
    the question's own words, and buckets the corpus overview lists. Other steps are useful."""
    fields = predictor.signature.output_fields
    if "missing" in fields:
        printed = _printed(inputs)
        answer, calculation = outputs.get("answer") or "", _calculation_used(inputs, outputs, printed)
        if Calculation.model_validate(outputs.get("calculation") or {}).expression.strip() and not calculation:
            return False
        computed: list[float] = []
        if calculation:
            try:
                computed.append(compute(calculation).value)
            except ExpressionError:
                return False
        used = calculation or answer
        return (bool(used.strip()) and not (outputs.get("missing") or "").strip()
                and all(_shown(text, printed, computed) for text in (used, answer, outputs.get("reasoning") or "")))
    if "findings" in fields:
        findings = [Finding.model_validate(finding) for finding in outputs.get("findings") or []]
        read = f"{inputs.get('results', '')}\n{inputs.get('trajectory', '')}"
        return (bool(findings) and not outputs.get("failure_reason")
                and all(value_on_page(finding, read) for finding in findings))
    if "decision" in fields:
        decision = RouteDecision.model_validate(outputs["decision"])
        terms = [*decision.entities, *decision.topic_terms]
        overview = inputs.get("corpus_overview", "")
        return (bool(terms) and grounded(terms, inputs["question"]) == terms
                and all(f"bucket {bucket}:" in overview for bucket in decision.buckets))
    return True


def _printed(inputs: dict) -> list[float]:
    """The numbers a first-rung read was shown: its question's and its passages'."""
    return numbers_in("\n".join([inputs.get("question", ""), *(inputs.get("passages") or [])]))


def _shown(text: str, printed: list[float], computed: list[float] = ()) -> bool:
    """Every number of `text` is printed, a small constant, or (about) a result computed in code."""
    return all(number in CONSTANTS or any(same_number(number, p) for p in printed)
               or any(abs(abs(number) - abs(c)) <= max(0.5, 0.005 * abs(c)) for c in computed)
               for number in numbers_in(text))


def _calculation_used(inputs: dict, outputs: dspy.Prediction, printed: list[float]) -> str:
    """The read's calculation when the program answers with its result (as `answer_from_passages`
    decides), else ''."""
    question = inputs.get("question", "")
    calculation = Calculation.model_validate(outputs.get("calculation") or {}).expression
    if is_calculation(calculation) and (asks_calculation(question) or (
            may_ask_calculation(question) and not _shown(outputs.get("answer") or "", printed))):
        return calculation
    return ""


def demo_metric(example, pred, trace=None) -> float | bool:
    """`answer_correct`; while bootstrapping (a trace is given), a pass only when the answer is also stated
    grounded, some predictor ran, and every step of the trace did its job (`useful_step`). The trace is never
    edited: a run with one failed or made-up step gives no demo at all. A run answered in code with no LM call
    is no pass either: it holds no step to learn from, and BootstrapFewShot would count it among the traces it
    stops after (the TAT-QA compile at 0bfd9ab "bootstrapped 2 full traces" from 6 train questions, both the
    table rung's, and its program held no demo)."""
    score = answer_correct(example, pred)
    if trace is None:
        return score
    return (bool(score) and bool(trace) and pred.get("grounding") == GROUNDED
            and all(useful_step(*step) for step in trace))
