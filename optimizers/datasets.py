"""Loaders for labeled QA data, read by path (the data stays where it is).

Each example is a `dspy.Example` with `question` as input and `id`, `answer`, `doc_id` (when the
question is about one document) and `evidence` (list of {"doc_id", "page"} with 1-based pages, or
{"doc_id"} for passages) as labels.
"""
from __future__ import annotations

import json
from pathlib import Path

import dspy


def _example(**fields) -> dspy.Example:
    return dspy.Example(**fields).with_inputs("question")


def load_financebench(data: str | Path) -> tuple[list[dspy.Example], list[Path]]:
    """FinanceBench questions and the PDFs they use. Evidence pages convert from the file's 0-based numbers."""
    root = Path(data)
    questions = root / "financebench_open_source.jsonl"
    if not questions.exists():
        raise FileNotFoundError(f"{questions} not found (point --data at the financebench folder)")
    examples = []
    for line in questions.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        evidence = [{"doc_id": item["doc_name"], "page": int(item["evidence_page_num"]) + 1,
                     "text": item["evidence_text"]} for item in record["evidence"]]
        examples.append(_example(id=record["financebench_id"], question=record["question"],
                                 answer=record["answer"], doc_id=record["doc_name"], evidence=evidence))
    pdfs = sorted({root / "pdfs" / f"{example.doc_id}.pdf" for example in examples})
    return examples, pdfs


def load_hotpotqa(data: str | Path) -> tuple[list[dspy.Example], list[Path]]:
    """HotpotQA questions (gold = supporting titles) and the passage corpus file."""
    root = Path(data)
    questions, corpus = root / "hotpotqa_train.json", root / "hotpotqa_train_corpus.json"
    for path in (questions, corpus):
        if not path.exists():
            raise FileNotFoundError(f"{path} not found (point --data at the hotpotqa folder)")
    examples = []
    for number, record in enumerate(json.loads(questions.read_text(encoding="utf-8"))):
        titles = list(dict.fromkeys(title for title, _ in record["supporting_facts"]))
        examples.append(_example(id=str(record.get("_id", number)), question=record["question"],
                                 answer=record["answer"], evidence=[{"doc_id": title} for title in titles]))
    return examples, [corpus]
