"""Grounding measured without an LM (`ferret eval --grounding`): does `programs.grounding` ground the gold
answer on its gold pages, and does it refuse a wrong value printed on the same pages?

Per question with a gold answer that is printed in its evidence (TAT-QA's arithmetic answers aside: a
computed value is grounded through its operands, which the gold does not give), over the split's questions:
- `gold_grounded_rate` (and `_on_page_rate`, `_unsupported_rate`): the gold answer's level on the
  gold pages (FinanceBench's evidence pages; every page of a passage dataset's evidence documents). A
  right answer that does not ground is an answer the program will not state.
- `distractor_grounded_rate`: a wrong value of the same kind printed on the same pages (another number
  for a numeric gold, another name for a text gold; yes/no golds have none), picked at random with a
  fixed seed, grounded. A wrong answer that grounds is one a user would trust.
"""
from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from ferret.corpus.hops import names
from ferret.corpus.numbers import number_spans
from ferret.corpus.tools import Corpus
from ferret.optimizers.datasets import load_dataset, prepare_index, split
from ferret.programs.grounding import LEVELS, ground, stems
from ferret.programs.passage_answer import asks_yes_no
from ferret.programs.verify import same_number

MIN_DISTRACTOR = 10  # smaller printed numbers are mostly footnote marks and list numbers


def gold_text(answer) -> str:
    return " and ".join(map(str, answer)) if isinstance(answer, list) else str(answer)


def distractor(question: str, gold: str, text: str, rng: random.Random) -> str:
    """A wrong value of the gold's kind printed in `text`, or "" when there is none."""
    golds = [number for _, _, number in number_spans(gold)]
    if golds:
        others = [text[start:end] for start, end, number in number_spans(text)
                  if abs(number) >= MIN_DISTRACTOR and not any(same_number(abs(number), abs(g)) for g in golds)]
    else:
        others = [name for name in names(text) if not stems(name) & stems(gold) and not stems(name) <= stems(question)]
    return rng.choice(sorted(set(others))) if others else ""


def gold_pages(example, corpus: Corpus) -> list[tuple[str, int]]:
    pages = []
    for item in example.evidence:
        if item.get("page"):
            pages.append((item["doc_id"], item["page"]))
        else:
            pages += [(item["doc_id"], page) for page in corpus.pages_of(item["doc_id"])]
    return pages


def evaluate_grounding(dataset: str, data: str | Path, index_dir: str | Path, split_name: str = "dev",
                       limit: int | None = None, seed: int = 0) -> dict:
    """The gold and distractor grounding rates (module docstring) over the split's questions."""
    examples, files = load_dataset(dataset, data)
    chosen = [example for example in split(examples, split_name) if example.get("evidence") and example.get("answer")
              and not example.get("derivation")]
    chosen = chosen[:limit] if limit else chosen
    if files:
        prepare_index(files, Path(index_dir))
    corpus = Corpus(index_dir)
    gold, wrong = Counter(), Counter()
    for example in chosen:
        rng = random.Random(f"{seed}:{example.id}")
        pages = gold_pages(example, corpus)
        answer = gold_text(example.answer)
        gold[ground(example.question, answer, None, pages, corpus).level] += 1
        if asks_yes_no(example.question):
            continue
        other = distractor(example.question, answer, "\n".join(corpus.page_text(*page) or "" for page in pages), rng)
        if other:
            wrong[ground(example.question, other, None, pages, corpus).level] += 1
    n, n_wrong = sum(gold.values()), sum(wrong.values())
    result: dict = {"dataset": dataset, "split": split_name, "n": n, "distractor_n": n_wrong}
    for level in reversed(LEVELS):
        result[f"gold_{level}_rate"] = round(gold[level] / n, 4) if n else 0.0
    for level in reversed(LEVELS):
        result[f"distractor_{level}_rate"] = round(wrong[level] / n_wrong, 4) if n_wrong else 0.0
    return result
