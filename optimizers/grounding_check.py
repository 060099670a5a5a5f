"""Grounding measured without an LM (`ferret eval --grounding`): does `programs.grounding` ground the gold
answer on its gold pages, and does it refuse a wrong value printed on the same pages?

Per question with a gold answer that is printed in its evidence (TAT-QA's arithmetic answers aside: a
computed value is grounded through its operands, which the gold does not give), over the split's questions:
- `gold_grounded_rate` (and `_on_page_rate`, `_unsupported_rate`): the gold answer's level on the
  gold pages (FinanceBench's evidence pages; every page of a passage dataset's evidence documents). A
  right answer that does not ground is an answer the program will not state.
- `distractor_grounded_rate`: a wrong value of the same kind printed on the same pages (another number
  for a numeric gold, another name for a text gold, the opposite verdict for a yes/no gold), picked at random with a
  fixed seed, grounded. A wrong answer that grounds is one a user would trust.
- `every_distractor_grounded_rate` (`every_distractor_n`): every wrong value of the gold's kind printed on the
  gold pages, each stated as the answer, grounded: the same measure without the draw, so a check's effect on
  wrong answers shows over thousands of values rather than one a question.
- `retrieved_distractor_grounded_rate`: the same for a wrong value printed only on the pages among the
  question's top 5 hybrid passages (what one read sees) that are not gold pages, grounded on all those
  pages: a read that copies a name from the wrong page. `retrieved_gold_grounded_rate`: the gold answer
  grounded on those pages, over the questions whose top 5 hold a gold page.
- `table_taken_rate`, `table_grounded_rate`, `table_right_rate`, `table_grounded_right_rate`: over every
  question of the split with an answer (arithmetic ones too: `table_n`), how often the table rung
  (`programs.table_rung.table_read`, in the question's document when it names one) reads an answer
  without a problem, how often that answer grounds (`ground` on its findings' pages, a calculation's
  operands its findings' numbers, as the iterative program grounds it), how often it is right
  (`metrics.answer_correct`), and how often it grounds and is right: of what the program states from
  the rung, grounded_right / grounded is the precision.
- `comparison_answered_rate`, `comparison_right_rate`: how often the iterative program's comparison rung
  (`programs.comparison`), which reads each compared name's own page, answers in code, and answers
  rightly (`metrics.answer_correct`): the rung's reach and its precision, without an LM.
"""
from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import dspy

from ferret.corpus.numbers import number_spans
from ferret.corpus.tools import Corpus
from ferret.optimizers.datasets import load_dataset, prepare_index, split
from ferret.optimizers.metrics import answer_correct
from ferret.optimizers.retrieval import search
from ferret.programs.comparison import compare
from ferret.programs.grounding import GROUNDED, LEVELS, ground, stems
from ferret.programs.hops import names
from ferret.programs.passage_answer import asks_yes_no
from ferret.programs.table_rung import table_read
from ferret.programs.verify import finding_number, same_number

MIN_DISTRACTOR = 10  # smaller printed numbers are mostly footnote marks and list numbers
READ_K = 5  # the passages one read sees


def gold_text(answer) -> str:
    return " and ".join(map(str, answer)) if isinstance(answer, list) else str(answer)


def distractors(question: str, gold: str, text: str, printed: str = "") -> list[str]:
    """Every wrong value of the gold's kind printed in `text` and not in `printed`: another number for a
    numeric gold, another name for a text one."""
    golds = [number for _, _, number in number_spans(gold)]
    if golds:
        elsewhere = [number for _, _, number in number_spans(printed)]
        others = [text[start:end] for start, end, number in number_spans(text)
                  if abs(number) >= MIN_DISTRACTOR and not any(same_number(abs(number), abs(g)) for g in golds + elsewhere)]
    else:
        others = [name for name in names(text) if not (named := stems(name)) & stems(gold)
                  and not named <= stems(question) and name.lower() not in printed.lower()]
    return sorted(set(others))


def distractor(question: str, gold: str, text: str, rng: random.Random, printed: str = "") -> str:
    """One of `distractors`, at random, or "" when there is none."""
    others = distractors(question, gold, text, printed)
    return rng.choice(others) if others else ""


def gold_pages(example, corpus: Corpus) -> list[tuple[str, int]]:
    pages = []
    for item in example.evidence:
        if item.get("page"):
            pages.append((item["doc_id"], item["page"]))
        else:
            pages += [(item["doc_id"], page) for page in corpus.pages_of(item["doc_id"])]
    return pages


def _doc_id(example, corpus: Corpus) -> str | None:
    return example.get("doc_id") if example.get("doc_id") in corpus.doc_ids else None


def retrieved_pages(example, corpus: Corpus) -> list[tuple[str, int]]:
    """The pages of the question's top READ_K hybrid passages (inside its document when it names one)."""
    hits = search(corpus, "hybrid", example.question, READ_K, _doc_id(example, corpus))
    return list(dict.fromkeys((hit["doc_id"], hit["page"]) for hit in hits))


def table_outcome(example, corpus: Corpus) -> tuple[bool, bool, bool, bool]:
    """(taken, grounded, right, grounded and right) of the table rung's read of the question: it read an
    answer without a problem; that answer grounds, as the iterative program grounds it; it is right."""
    found = table_read(corpus, example.question, bucket=example.get("bucket"), doc_id=_doc_id(example, corpus))
    read = found.read if found else None
    if not read or not read.answer or read.problem:
        return False, False, False, False
    values = [n for f in read.findings if (n := finding_number(f)) is not None] if read.computation else None
    places = [(f.doc_id, f.page) for f in read.findings]
    grounded = ground(example.question, read.answer, values, places, corpus, read.computation).level == GROUNDED
    right = answer_correct(example, dspy.Prediction(status="answer", answer=read.answer)) == 1.0
    return True, grounded, right, grounded and right


def evaluate_grounding(dataset: str, data: str | Path, index_dir: str | Path, split_name: str = "dev",
                       limit: int | None = None, seed: int = 0) -> dict:
    """The gold and distractor grounding rates (module docstring) over the split's questions."""
    examples, files = load_dataset(dataset, data)
    answered = [example for example in split(examples, split_name) if example.get("answer")]
    answered = answered[:limit] if limit else answered
    chosen = [example for example in answered if example.get("evidence") and not example.get("derivation")]
    if files:
        prepare_index(files, Path(index_dir))
    corpus = Corpus(index_dir)
    counts = {name: Counter() for name in ("gold", "distractor", "every_distractor", "retrieved_gold", "retrieved_distractor")}
    rungs = Counter()  # the code rungs' answers: ("comparison", "answered" or "right")
    for example in chosen:
        rng = random.Random(f"{seed}:{example.id}")
        pages, retrieved = gold_pages(example, corpus), retrieved_pages(example, corpus)
        answer = gold_text(example.answer)
        counts["gold"][ground(example.question, answer, None, pages, corpus).level] += 1
        if set(pages) & set(retrieved):
            counts["retrieved_gold"][ground(example.question, answer, None, retrieved, corpus).level] += 1
        compared = compare(example.question, corpus, doc_id=_doc_id(example, corpus))
        if compared and compared.answer:
            rungs["comparison", "answered"] += 1
            rungs["comparison", "right"] += answer_correct(
                example, dspy.Prediction(status="answer", answer=compared.answer)) == 1.0
        if asks_yes_no(example.question):  # its wrong value is the opposite verdict
            verdict = "No" if answer.strip().lower().startswith("yes") else "Yes"
            counts["distractor"][ground(example.question, verdict, None, pages, corpus).level] += 1
            continue
        on_gold_pages = "\n".join(corpus.page_text(*page) or "" for page in pages)
        if other := distractor(example.question, answer, on_gold_pages, rng):
            counts["distractor"][ground(example.question, other, None, pages, corpus).level] += 1
        for other in distractors(example.question, answer, on_gold_pages):
            counts["every_distractor"][ground(example.question, other, None, pages, corpus).level] += 1
        elsewhere = "\n".join(corpus.page_text(*page) or "" for page in retrieved if page not in pages)
        if other := distractor(example.question, answer, elsewhere, rng, printed=on_gold_pages):
            counts["retrieved_distractor"][ground(example.question, other, None, retrieved, corpus).level] += 1
    tables = [table_outcome(example, corpus) for example in answered]
    result: dict = {"dataset": dataset, "split": split_name, "n": sum(counts["gold"].values()),
                    "distractor_n": sum(counts["distractor"].values())}
    for name, counted in counts.items():
        total = sum(counted.values())
        if name.startswith(("retrieved", "every")):
            result[f"{name}_n"] = total
        for level in reversed(LEVELS):
            result[f"{name}_{level}_rate"] = round(counted[level] / total, 4) if total else 0.0
    result["table_n"] = len(answered)
    for at, name in enumerate(("taken", "grounded", "right", "grounded_right")):
        result[f"table_{name}_rate"] = round(sum(outcome[at] for outcome in tables) / len(answered), 4) if answered else 0.0
    for name in ("answered", "right"):
        result[f"comparison_{name}_rate"] = round(rungs["comparison", name] / len(chosen), 4) if chosen else 0.0
    return result
