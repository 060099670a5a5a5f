"""Retrieval metrics: the helpers on hand-built rankings, and evaluate_recall end to end on a real
SciFact subset (the gold abstracts of 20 claims among ~220) and on the small page-level corpus."""
from __future__ import annotations

import json
import math

import pytest

from ferret.cli import main
from ferret.optimizers import retrieval
from ferret.optimizers.datasets import DATASETS, load_scifact
from ferret.optimizers.retrieval import evaluate_recall, ndcg, page_level, ranked_units, recall, scores
from tests.conftest import SHARED_DATA, shared


def test_ndcg_binary_relevance():
    assert ndcg(["a", "x", "b"], {"a", "b"}, 10) == pytest.approx(1.5 / (1 + 1 / math.log2(3)))
    assert ndcg(["a", "b", "x"], {"a", "b"}, 10) == 1.0
    assert ndcg(["x", "a"], {"a"}, 10) == pytest.approx(1 / math.log2(3))
    assert ndcg(["x", "y", "a"], {"a"}, 2) == 0.0
    # More gold than k: the ideal has k relevant ranks.
    assert ndcg(["a", "b"], {"a", "b", "c"}, 2) == 1.0


def test_units_recall_and_scores():
    hits = [{"doc_id": "d", "page": 3}, {"doc_id": "d", "page": 3}, {"doc_id": "e", "page": 1},
            {"doc_id": "d", "page": 5}]
    assert ranked_units(hits, pages=True) == [("d", 3), ("e", 1), ("d", 5)]
    assert ranked_units(hits, pages=False) == ["d", "e"]
    assert page_level([{"doc_id": "d", "page": 3}]) and not page_level([{"doc_id": "d", "page": 3}, {"doc_id": "e"}])
    assert recall(["a", "b", "c"], {"a", "c"}, 2) == 0.5
    result = scores(["x", "a", "y", "b"], {"a", "b"}, k=2)
    assert result == {"recall@2": 0.5, "recall_all@2": 0.0, "recall_any@2": 1.0,
                      "ndcg@10": pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))),
                      "recall@100": 1.0}


@pytest.fixture(scope="module")
def scifact_subset(tmp_path_factory):
    """20 SciFact claims, and their gold abstracts plus 200 others as a JSONL corpus."""
    root = tmp_path_factory.mktemp("scifact")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FERRET_CACHE", str(root / "cache"))
        examples, (corpus,) = load_scifact(shared(SHARED_DATA / "scifact"))
    examples = examples[:20]
    gold = {item["doc_id"] for example in examples for item in example.evidence}
    records = [json.loads(line) for line in corpus.read_text().splitlines()]
    subset = [r for r in records if r["id"] in gold] + [r for r in records if r["id"] not in gold][:200]
    (root / "corpus.jsonl").write_text("".join(json.dumps(record) + "\n" for record in subset))
    (root / "claims.jsonl").write_text("".join(json.dumps({"id": e.id, "question": e.question, "evidence": e.evidence})
                                               + "\n" for e in examples))
    return root, examples


def test_scifact_subset_metrics(scifact_subset, monkeypatch):
    root, examples = scifact_subset
    monkeypatch.setitem(DATASETS, "scifact", lambda data: (examples, [root / "corpus.jsonl"]))
    result = evaluate_recall("scifact", root, root / "index")
    assert result["n"] == 20 and result["gold_docs_not_indexed"] == 0
    for mode in retrieval.MODES:
        names = ("recall@5", "recall_all@5", "recall_any@5", "ndcg@10", "recall@100")
        assert {f"{mode}_{name}" for name in names} <= set(result)
    assert result["hybrid_ndcg@10"] >= 0.6 and result["hybrid_recall@5"] >= 0.7 and result["hybrid_recall@100"] >= 0.9
    assert result["text_recall@100"] >= result["text_recall@5"] >= result["text_recall_all@5"]
    # The same questions as the user's JSONL over the already-built index: nothing ingested, same numbers.
    monkeypatch.setattr(retrieval, "prepare_index", lambda *args, **kwargs: pytest.fail("jsonl must not ingest"))
    mine = evaluate_recall("jsonl", root / "claims.jsonl", root / "index", modes=("text", "hybrid"))
    assert {key: mine[key] for key in mine if key.startswith(("text_", "hybrid_"))} == \
           {key: result[key] for key in result if key.startswith(("text_", "hybrid_"))}


def test_page_level_and_evidence_queries(small_corpus, tmp_path):
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        '{"id": 1, "question": "When is revenue recognised?", "doc_id": "report",'
        ' "evidence": [{"doc_id": "report", "page": 1,'
        ' "text": "Revenue is recognised when control of the goods passes"}]}\n'
        '{"id": 2, "question": "Who sold the valve caps?",'
        ' "evidence": [{"doc_id": "inv1", "text": "Vendor: Acme Tire Co."}]}\n'
        '{"id": 3, "question": "No evidence given"}\n'
        '{"id": 4, "question": "What did the batteries cost?", "evidence": [{"doc_id": "missing"}]}\n')
    result = evaluate_recall("jsonl", questions, small_corpus.store.dir, k=1, modes=("text",))
    assert result["split"] == "all" and result["n"] == 3 and result["gold_docs_not_indexed"] == 1
    assert result["text_recall@1"] == result["text_recall_any@1"] == 0.667
    # By the hash of their ids: 1 is in dev, 2 in test, 3 (no evidence) and 4 in train.
    parts = {name: evaluate_recall("jsonl", questions, small_corpus.store.dir, k=1, modes=("text",), split_name=name)
             for name in ("train", "dev", "test")}
    assert {name: (part["split"], part["n"], part["gold_docs_not_indexed"]) for name, part in parts.items()} == \
           {"train": ("train", 1, 1), "dev": ("dev", 1, 0), "test": ("test", 1, 0)}
    assert parts["train"]["text_recall@1"] == 0.0 and parts["dev"]["text_recall@1"] == 1.0
    with pytest.raises(ValueError, match="needs evidence text"):
        evaluate_recall("jsonl", questions, small_corpus.store.dir, query_from="evidence")
    with pytest.raises(FileNotFoundError, match="ingest the jsonl documents"):
        evaluate_recall("jsonl", questions, tmp_path / "no_index")


def test_eval_retrieval_scores_the_split_asked_for(small_corpus, tmp_path, capsys):
    questions = tmp_path / "questions.jsonl"
    questions.write_text('{"id": 1, "question": "When is revenue recognised?", "evidence": [{"doc_id": "report"}]}\n'
                         '{"id": 2, "question": "Who sold the valve caps?", "evidence": [{"doc_id": "inv1"}]}\n')
    ran = {}
    for name in ("test", None):
        chosen = ["--split", name] if name else []
        assert main(["eval", "--retrieval", "--dataset", "jsonl", "--data", str(questions), "--index",
                     str(small_corpus.store.dir), *chosen, "--no-track", "--json"]) == 0
        ran[name] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (ran["test"]["split"], ran["test"]["n"]) == ("test", 1)  # question 2 only
    assert (ran[None]["split"], ran[None]["n"]) == ("all", 2)  # without --split: every question
