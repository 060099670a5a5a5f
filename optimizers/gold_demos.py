"""Labeled demos of the read from the train split's gold answers: `ferret compile --optimizer labeled`.

DSPy's LabeledFewShot puts train questions with their gold answers in every step's prompt, without what the
step reads (a read's demo with no passages: the TAT-QA compile at 23da317 that did so scored 0.0625 on 16
dev questions against 0.3125 uncompiled). `GoldEvidenceFewShot` builds whole demos instead, for the read
(`IterativeRetriever.read`) alone: a train question that reaches the read (not one the table rung answers in
code, `IterativeRetriever.answered_in_code`), the passages the first rung shows the read for it
(`IterativeRetriever.first_read_hits`), and as outputs its gold answer, when that answer stands on those
passages by the checks a read's answer passes (`programs.passage_answer.answer_from_passages`: every number
printed, or computed in code from printed operands, or the words printed) and the answer metric takes it.
The calculation is the gold's own derivation where the dataset has one (TAT-QA's `derivation`), its operands
written as code computes them, without thousands separators. The sources are the passages that print what
the answer rests on. No LM runs: a compile takes seconds.

Which train questions become demos is seeded, the first `k` that stand in a shuffled train split; the other
steps keep their demos (the Router its worked readings). With a `pool` (`--optimizer knn`), the read keeps the
first `pool` that stand and is shown the `k` of them nearest to each question it reads (`demo_k`,
`programs.nearest_demos`): DSPy's KNN few-shot over labeled demos, saved in the compiled state."""
from __future__ import annotations

import random
import re

import dspy
from dspy.teleprompt import Teleprompter

from ferret.optimizers.metrics import answer_correct, gold_items
from ferret.programs.arithmetic import is_calculation
from ferret.programs.iterative import numbered_passages
from ferret.programs.passage_answer import answer_from_passages

THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
MAX_ANSWER_WORDS = 12  # a demo's answer is the few words the read's instruction asks for, not a gold sentence


def read_demo(program: dspy.Module, example: dspy.Example) -> dspy.Example | None:
    """The read's demo for a labeled train question, or None when the read never sees the question (code
    answers it) or its gold answer does not stand on the passages the program's first rung reads for it."""
    doc_id = example.get("doc_id")
    if program.answered_in_code(example.question, doc_id=doc_id):
        return None
    hits = program.first_read_hits(example.question, doc_id=doc_id)
    gold = ", ".join(gold_items(example))
    derivation = str(example.get("derivation") or "")
    calculation = derivation if is_calculation(derivation) else ""
    if not hits or not gold or len(gold.split()) > MAX_ANSWER_WORDS:
        return None
    read = answer_from_passages(example.question, hits, calculation, gold, [], repair=False)
    if read.problem or read.whole_passages or not read.findings:
        return None
    if not answer_correct(example, dspy.Prediction(status="answer", answer=read.answer)):
        return None
    return dspy.Example(question=example.question, passages=numbered_passages(hits, doc_id),
                        calculation={"expression": THOUSANDS.sub("", read.computation)}, answer=read.answer,
                        sources=_sources(hits, read.findings), missing="").with_inputs("question", "passages")


def _sources(hits: list[dict], findings: list) -> list[int]:
    """The numbers of the passages that print the findings."""
    return sorted({n for f in findings for n, hit in enumerate(hits, 1)
                   if (hit["doc_id"], hit["page"]) == (f.doc_id, f.page) and f.value in hit["text"]})


class GoldEvidenceFewShot(Teleprompter):
    """Sets the read's demos to `k` labeled train questions whose gold answers stand on the passages it would
    be shown (`read_demo`), or to `pool` of them of which each read is shown the `k` nearest; the program's
    other demos stay as they are."""

    def __init__(self, k: int = 2, seed: int = 0, pool: int = 0):
        super().__init__()
        self.k, self.seed, self.pool = k, seed, pool

    def compile(self, student: dspy.Module, *, trainset: list[dspy.Example], teacher=None, valset=None) -> dspy.Module:
        program = student.deepcopy()
        order = list(trainset)
        random.Random(self.seed).shuffle(order)
        demos, size = [], max(self.k, self.pool)
        for example in order:
            if len(demos) == size:
                break
            if (demo := read_demo(program, example)) is not None:
                demos.append(demo)
        program.read.predict.demos = demos
        program.demo_k = self.k if self.pool else 0
        program._compiled = True
        return program
