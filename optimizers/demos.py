"""Which steps of a correct run become demos when an optimizer bootstraps them.

DSPy's BootstrapFewShot (also inside random search and MIPROv2) turns every step of a run whose
answer passed the metric into a demo for that step's predictor. In a run of the looping program
the answer can be right while some steps failed on the way: the first compile of the iterative
program on the embedded model bootstrapped an Extraction demo with no findings ("No findings") and
one whose failure_reason said "The results do not hold the values.", and the compiled program
copied them: 16 of 19 dev questions then failed. So a correct run keeps only the steps that did
their job (`useful_step`), and a predictor left without a bootstrapped demo keeps the uncompiled
program's own (the Router's worked readings, `keep_uncompiled_demos`).
"""
from __future__ import annotations

from collections.abc import Callable

import dspy

from ferret.corpus.numbers import numbers_in
from ferret.programs.arithmetic import (ExpressionError, asks_calculation, compute, format_result, is_calculation,
                                        may_ask_calculation)
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
    on 16 dev questions against 0.3125 uncompiled. A Router step (it
    outputs a decision) read terms that are the question's own words, and buckets the corpus overview
    lists. Other steps are kept."""
    fields = predictor.signature.output_fields
    if "missing" in fields:
        printed = _printed(inputs)
        answer, calculation = outputs.get("answer") or "", _calculation_used(inputs, outputs, printed)
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


def demo_step(predictor: dspy.Predict, inputs: dict, outputs: dspy.Prediction) -> tuple:
    """The step as it should be shown as a demo. A first-rung read whose calculation the program
    answered with states that result as its answer, and, where its reasoning wrote numbers of its own
    (the embedded model's arithmetic: "$44.1 - $56.7 = $9.6" beside the right calculation
    "44.1 - 56.7"), names the calculation instead. Of the TAT-QA compile at a505311's two correct
    traces, both reads were such and were dropped whole, so the compiled program learned nothing.
    A read answered with its text shows no calculation: the TAT-QA compile at 7b63cce kept reads with
    "795 + 772" beside the answer "795 and 772", and its program wrote a subtraction for most dev
    questions. Other steps are returned as they are; `useful_step` then judges the result."""
    if "missing" not in predictor.signature.output_fields:
        return predictor, inputs, outputs
    printed = _printed(inputs)
    calculation = _calculation_used(inputs, outputs, printed)
    if not calculation:
        written = Calculation.model_validate(outputs.get("calculation") or {}).expression
        return predictor, inputs, (dspy.Prediction(**{**outputs.toDict(), "calculation": Calculation()})
                                   if written.strip() else outputs)
    try:
        value = compute(calculation).value
    except ExpressionError:
        value = None
    if value is None:
        return predictor, inputs, outputs
    shown = {**outputs.toDict(), "answer": format_result(value)}
    if not _shown(outputs.get("reasoning") or "", printed, [value]) and "reasoning" in outputs:
        shown["reasoning"] = f"The answer is the result of {calculation}, whose values the passages print."
    return predictor, inputs, dspy.Prediction(**shown)


def useful_steps(metric: Callable) -> Callable:
    """`metric`, which while bootstrapping (a trace is given) also turns a passing run's steps into
    what a demo should show (`demo_step`) and drops those that are not `useful_step`s, so that DSPy
    makes demos of the others only."""

    def keeping_useful_steps(example, pred, trace=None, *args, **kwargs):
        score = metric(example, pred, trace, *args, **kwargs)
        if trace is not None and score:
            trace[:] = [step for step in (demo_step(*step) for step in trace) if useful_step(*step)]
        return score

    keeping_useful_steps.__name__ = getattr(metric, "__name__", "metric")
    return keeping_useful_steps


def keep_uncompiled_demos(compiled: dspy.Module, uncompiled: dspy.Module) -> None:
    """A predictor the optimizer left without a bootstrapped demo (only labeled questions, or none)
    gets the uncompiled program's demos back in front of them: optimizers start from a copy with no
    demos, which would drop the Router's worked readings."""
    before = dict(uncompiled.named_predictors())
    for name, predictor in compiled.named_predictors():
        own = before[name].demos
        if own and not any(demo.get("augmented") or demo in own for demo in predictor.demos):
            predictor.demos = [*own, *predictor.demos]
