"""The Router's routes on the sample corpus with the scripted LM (the Router's decision is scripted per
question; everything after it is ferret's code), scored against the sample's gold answers; and
`ferret demo` end to end."""
from __future__ import annotations

import csv

import dspy
import mlflow
import pytest

from ferret.corpus.tools import Corpus
from ferret.optimizers.datasets import load_jsonl
from ferret.optimizers.metrics import answer_correct
from ferret.cli import main
from ferret.programs.iterative import IterativeRetriever
from tests.conftest import SAMPLE
from tests.fakes import scripted_lm

YEAR_2023 = {"field": "date", "op": "between", "value": ["2023-01-01", "2023-12-31"]}
DECISIONS = {  # question id → what a good Router says
    "inv-list-tires": {"intent": "list", "buckets": ["invoices"], "topic_terms": ["tires"]},
    "inv-sum-batteries-2023": {"intent": "compute", "aggregate": "sum", "buckets": ["invoices"],
                               "topic_terms": ["batteries"], "constraints": [YEAR_2023]},
    "inv-qty-tires-2023": {"intent": "compute", "aggregate": "sum", "buckets": ["invoices"], "topic_terms": ["tires"],
                           "constraints": [YEAR_2023]},
    "ds-list-narrow-panels": {"intent": "list", "buckets": ["datasheets"], "topic_terms": ["solar panels"],
                              "constraints": [{"field": "width", "op": "<=", "value": 1.2}]},
    "inv-overflow-cables": {"intent": "list", "buckets": ["invoices"], "topic_terms": ["cable"]},
    "inv-list-battery-vendors-2023": {"intent": "list", "buckets": ["invoices"], "topic_terms": ["batteries"],
                                      "constraints": [YEAR_2023]},
}


@pytest.fixture(scope="module")
def questions():
    return {example.id: example for example in load_jsonl(SAMPLE / "qa.jsonl")[0]}


def router(decisions_by_question: dict[str, dict]):
    def route(inputs):
        return {"decision": {"route": "structured", **decisions_by_question[inputs["question"]]}}
    return route


@pytest.mark.parametrize("question_id", sorted(DECISIONS))
def test_structured_questions_get_their_gold_answer_from_annotations(sample_index, questions, question_id):
    example = questions[question_id]
    lm, engine = scripted_lm({"route": router({example.question: DECISIONS[question_id]})})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = IterativeRetriever(Corpus(sample_index))(question=example.question)
    assert answer_correct(example, result) == 1.0, (result.status, result.answer, result.clarification)
    assert engine.steps() == ["route"]
    if example.expected_status == "answer":
        assert result.citations_verified and result.unverified_numbers == []
    else:  # the overload: the total stated, every row kept for export
        assert f"{example.answer} rows match 'cable'" in result.clarification and len(result.rows) == int(example.answer)


def test_ferret_demo_ingests_asks_and_evaluates(sample_index, questions, capsys, monkeypatch):
    decisions = {questions[i].question: DECISIONS[i] for i in ("inv-list-tires", "inv-sum-batteries-2023")}
    lm, _ = scripted_lm({"route": lambda inputs: (
        {"decision": {"route": "structured", **decisions[inputs["question"]]}} if inputs["question"] in decisions
        else {"decision": {"intent": "lookup", "route": "hybrid"}})})
    for module in ("ferret.programs.lm", "ferret.optimizers.evaluate"):  # the ask step, and the eval step
        monkeypatch.setattr(f"{module}.make_lm", lambda spec=None, threads=None: lm)
    assert main(["demo", "--index", str(sample_index), "--limit", "6"]) == 0
    out = capsys.readouterr().out
    assert "1/3 ingest" in out and "2/3 ask" in out and "3/3 eval: the first 6 sample questions" in out
    assert out.count("\nQ (") == 4 and "Q (list): Which receipts contain tires?" in out
    assert "ANSWER: 9 documents match 'tires': inv-0002" in out
    assert "ANSWER: Sum of Amount over" in out and "8,417.43" in out
    run_id = out.split("MLflow run ")[1].split()[0]
    from ferret.optimizers.tracking import tracking_uri

    mlflow.set_tracking_uri(tracking_uri())
    run = mlflow.get_run(run_id)
    assert run.data.params["dataset"] == "sample" and run.data.metrics["n"] == 6
    # the first six of the file: list, aggregate, lookup, overflow, clause, compute; the first two are scripted right
    assert run.data.metrics["n_correct"] >= 2
    with open(mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path="results.csv"), newline="") as table:
        rows = list(csv.DictReader(table))
    assert float({row["id"]: row["accuracy"] for row in rows}["inv-sum-batteries-2023"]) == 1.0
