"""`ferret eval --grounding`: grounding measured without an LM, on gold answers and wrong values of their pages."""
from __future__ import annotations

import json
import random

import mlflow
import pytest

from ferret.optimizers.datasets import _example
from ferret.optimizers.grounding_check import distractor, distractors, gold_text, table_outcome
from ferret.optimizers.tracking import tracking_uri
from ferret.cli import main

QUESTIONS = [
    {"id": "g1", "question": "What was Consumer revenue in 2023?", "answer": "1,250",
     "evidence": [{"doc_id": "report", "page": 1}]},
    {"id": "g2", "question": "What was Enterprise revenue in 2022?", "answer": "3,150",  # the Total row's value
     "evidence": [{"doc_id": "report", "page": 1}]},
    {"id": "g3", "question": "Is revenue recognised when control passes to the customer?", "answer": "Yes",
     "evidence": [{"doc_id": "report", "page": 1}]},
]


def test_eval_grounding_rates_gold_answers_and_wrong_values_of_their_pages(small_corpus, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FERRET_HOME", str(tmp_path))
    qa = tmp_path / "qa.jsonl"
    qa.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    assert main(["eval", "--grounding", "--dataset", "jsonl", "--data", str(qa), "--index", str(small_corpus.store.dir),
                 "--split", "all", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    # g1 grounds; g2's "gold" is another row's value and g3's a verdict no code computed: on the page, not grounded
    assert summary["n"] == 3 and summary["gold_grounded_rate"] == pytest.approx(1 / 3, abs=1e-3)
    assert summary["gold_on_page_rate"] == pytest.approx(2 / 3, abs=1e-3)
    # a yes/no question's distractor is the opposite verdict; the numeric ones get another number of the page;
    # none grounds
    assert summary["distractor_n"] == 3 and summary["distractor_grounded_rate"] == 0.0
    # every other number of the report's page, for each numeric question (the drawn one among them): none grounds
    assert summary["every_distractor_n"] > summary["distractor_n"] and summary["every_distractor_grounded_rate"] == 0.0
    # the top 5 passages hold the report's page and the receipts': a receipt's amount never grounds there
    assert summary["retrieved_gold_n"] == 3 and summary["retrieved_gold_grounded_rate"] == pytest.approx(1 / 3, abs=1e-3)
    assert summary["retrieved_distractor_n"] == 2 and summary["retrieved_distractor_grounded_rate"] == 0.0
    run = mlflow.MlflowClient(tracking_uri()).get_run(summary["mlflow_run_id"])
    assert run.data.params["program"] == "grounding" and run.data.metrics["gold_grounded_rate"] == summary["gold_grounded_rate"]


def test_a_distractor_is_a_value_of_the_golds_kind_that_is_not_the_gold():
    text = "Revenue 1,250 in 2023 and 1,100 in 2022; note 3. Acme Tire Co. sold it to Volta Motors."
    numbers = {distractor("What was revenue?", "1,250", text, random.Random(seed)) for seed in range(20)}
    assert numbers <= {"2023", "1,100", "2022"} and "1,100" in numbers  # never the gold, never a small list number
    assert distractor("Who sold it?", "Acme Tire Co.", text, random.Random(0)) in {"Revenue", "Volta Motors"}
    assert distractors("What was revenue?", "1,250", text) == ["1,100", "2022", "2023"]  # every one the draw picks from
    assert distractor("What was revenue?", "1,250", "Revenue 1,250", random.Random(0)) == ""
    # none printed where `printed` prints it (the gold pages, for a wrong value of another page)
    assert distractor("What was revenue?", "1,250", text, random.Random(0), printed="1,100 in 2023, 2022") == ""
    for seed in range(5):
        other = distractor("Who sold it?", "Acme Tire Co.", text, random.Random(seed), printed="Volta Motors")
        assert other.startswith("Revenue")
    assert gold_text(["2019", "2018"]) == "2019 and 2018"


def test_eval_grounding_counts_what_the_comparison_rung_answers_and_how_often_rightly(hop_corpus, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FERRET_HOME", str(tmp_path))
    evidence = [{"doc_id": "Maximum Overdrive"}]
    questions = [{"id": "h1", "question": "Maximum Overdrive is a horror picture written and made by whom?",
                  "answer": "Stephen King", "evidence": evidence},
                 {"id": "h2", "question": "The Exies are an American rock band formed in what city?",
                  "answer": "San Francisco", "evidence": [{"doc_id": "The Exies"}]},  # the page says Los Angeles
                 {"id": "h3", "question": "Was Maximum Overdrive made by Stephen King?", "answer": "yes",
                  "evidence": evidence},  # yes/no: no gap to fill
                 # comparisons, which the comparison rung answers from each band's page: 1997 against 2004
                 {"id": "h4", "question": "Which band was formed first, The Exies or Circus Diablo?", "answer": "The Exies",
                  "evidence": [{"doc_id": "The Exies"}, {"doc_id": "Circus Diablo"}]},
                 {"id": "h5", "question": "Which band was formed later, The Exies or Circus Diablo?", "answer": "The Exies",
                  "evidence": [{"doc_id": "The Exies"}, {"doc_id": "Circus Diablo"}]}]  # a wrong gold: not right
    qa = tmp_path / "qa.jsonl"
    qa.write_text("".join(json.dumps(q) + "\n" for q in questions))
    assert main(["eval", "--grounding", "--dataset", "jsonl", "--data", str(qa), "--index", str(hop_corpus.store.dir),
                 "--split", "all", "--json", "--no-track"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert not any(key.startswith(("gap_", "opening_")) for key in summary)  # those rungs are gone
    assert summary["comparison_answered_rate"] == pytest.approx(2 / 5, abs=1e-3)
    assert summary["comparison_right_rate"] == pytest.approx(1 / 5, abs=1e-3)


def test_eval_grounding_counts_the_table_rungs_reads_over_every_question_arithmetic_ones_too(small_corpus, tmp_path,
                                                                                           monkeypatch, capsys):
    monkeypatch.setenv("FERRET_HOME", str(tmp_path))
    evidence = [{"doc_id": "report", "page": 1}]
    questions = QUESTIONS + [
        {"id": "t1", "question": "What was the change in Consumer revenue from 2022 to 2023?", "answer": "150",
         "derivation": "1,250 - 1,100", "evidence": evidence},  # arithmetic: out of the gold counts, in the table's
        {"id": "t2", "question": "What was the change in Enterprise revenue from 2022 to 2023?", "answer": "999",
         "derivation": "2,400 - 2,050", "evidence": evidence},  # a wrong gold: read and grounded, not right
        {"id": "t3", "question": "Who sold the tires?", "answer": "Acme Tire Co.", "evidence": evidence}]  # no table read
    qa = tmp_path / "qa.jsonl"
    qa.write_text("".join(json.dumps(q) + "\n" for q in questions))
    assert main(["eval", "--grounding", "--dataset", "jsonl", "--data", str(qa), "--index", str(small_corpus.store.dir),
                 "--split", "all", "--json", "--no-track"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["n"] == 4 and summary["table_n"] == 6  # the gold counts keep their filter
    assert summary["table_taken_rate"] == pytest.approx(4 / 6, abs=1e-3)  # t1 and t2, arithmetic ones; g1 and g2's cells
    assert summary["table_right_rate"] == pytest.approx(2 / 6, abs=1e-3)  # t2's and g2's reads are not right
    assert summary["table_grounded_right_rate"] == pytest.approx(2 / 6, abs=1e-3)
    outcomes = {q["id"]: table_outcome(_example(**q), small_corpus) for q in questions}
    assert outcomes["t3"] == (False, False, False, False) and outcomes["t1"] == (True, True, True, True)
    assert outcomes["t2"][0] and not outcomes["t2"][2] and not outcomes["t2"][3]  # read, not right
