"""The scripted readers run the whole iterative program, no LM: the oracle states the gold answer where what it
was shown holds it, the wrong reader a wrong value printed beside it, and the program's checks decide what is
stated (`optimizers.scripted_readers`)."""
from __future__ import annotations

import json

import dspy
import pytest

from ferret.cli import main
from ferret.optimizers.evaluate import evaluate
from ferret.optimizers.scripted_readers import Shown, oracle_answer, reader_lm, reading, wrong_answer
from ferret.programs.iterative import IterativeRetriever
from ferret.programs.lm import answering

QUESTIONS = [
    {"id": "caps", "question": "How much did the valve caps cost?", "answer": "12.00",
     "evidence": [{"doc_id": "inv1", "page": 1}]},
    {"id": "tires", "question": "How many all-season tires were bought?", "answer": "4",
     "evidence": [{"doc_id": "inv1", "page": 1}]},
    {"id": "missing", "question": "Who audited the annual report?", "answer": "Deloitte",
     "evidence": [{"doc_id": "report", "page": 1}]},
]
HOPS = [  # hop_corpus: the answer's page, and the page that names the film the question describes
    {"id": "one hop", "question": "Who made the horror picture Maximum Overdrive?", "answer": "Stephen King",
     "evidence": [{"doc_id": "Maximum Overdrive"}]},
    {"id": "two hops", "question": "Who made the film that was shot in Leland in 1986?", "answer": "Stephen King",
     "evidence": [{"doc_id": "Leland, North Carolina"}, {"doc_id": "Maximum Overdrive"}]},
    {"id": "place", "question": "Who directed the 1986 film Blue Velvet?", "answer": "David Lynch",
     "evidence": [{"doc_id": "Blue Velvet (film)"}]},
]


def ask(corpus, kind: str, record: dict) -> dspy.Prediction:
    example = dspy.Example(**record).with_inputs("question")
    with reading(example), answering(reader_lm(kind)):
        return IterativeRetriever(corpus)(question=example.question)


@pytest.mark.parametrize("record", QUESTIONS[:2], ids=lambda r: r["id"])
def test_the_oracle_states_a_printed_number_read_from_the_passages(small_corpus, record):
    result = ask(small_corpus, "oracle", record)
    assert (result.status, result.answer, result.answered_by) == ("answer", record["answer"], "read")
    assert result.citations_verified and result.grounding == "grounded"


@pytest.mark.parametrize("record", HOPS, ids=lambda r: r["id"])
def test_the_oracle_states_a_name_cited_on_its_pages(hop_corpus, record):
    result = ask(hop_corpus, "oracle", record)
    assert (result.status, result.answer, result.grounding) == ("answer", record["answer"], "grounded")
    assert "Maximum Overdrive" in {c["doc_id"] for c in result.citations} or "Blue Velvet" in result.citations[0]["doc_id"]


def test_the_oracle_states_a_text_answer_as_the_page_prints_it(hop_corpus):
    """A gold written in other case (or with other articles or punctuation) is stated as printed, as a reader
    copies it from the page."""
    result = ask(hop_corpus, "oracle", {**HOPS[2], "answer": "david lynch"})
    assert (result.status, result.answer, result.grounding) == ("answer", "David Lynch", "grounded")


def test_the_oracle_says_what_is_missing_when_no_passage_holds_the_answer(small_corpus):
    result = ask(small_corpus, "oracle", QUESTIONS[2])
    assert result.status == "fail" and result.answer == "" and result.candidate == ""
    assert any("not in these passages" in f["reason"] for f in result.failed_searches)


@pytest.mark.parametrize("corpus, record, said", [("small_corpus", QUESTIONS[0], "480.00"),
                                                   ("small_corpus", QUESTIONS[1], "480.00"),
                                                   ("hop_corpus", HOPS[2], "North Carolina")],
                         ids=["another row", "an amount for how many", "a place for who"])
def test_the_wrong_reader_states_a_printed_wrong_value_that_the_checks_refuse(request, corpus, record, said):
    result = ask(request.getfixturevalue(corpus), "wrong", record)
    assert (result.status, result.answer, result.candidate) == ("fail", "", said)  # read, cited, not stated
    read = next(step for step in result.trajectory if step["step"] == "read")
    assert read["answer"] == said and read["grounding"] != "grounded"


def test_the_wrong_reader_answers_a_choice_with_the_other_name_it_offers_which_is_not_stated(hop_corpus):
    record = {"id": "choice", "question": "Which band was formed first, The Exies or Circus Diablo?", "answer": "The Exies",
              "evidence": [{"doc_id": "The Exies"}, {"doc_id": "Circus Diablo"}]}
    result = ask(hop_corpus, "wrong", record)
    read = next(step for step in result.trajectory if step["step"] == "read")
    assert read["answer"] == "Circus Diablo" and result.status != "answer"  # a choice is no fact a page grounds


def test_a_scripted_reader_needs_the_example_it_answers(small_corpus):
    with answering(reader_lm("oracle")):
        result = IterativeRetriever(small_corpus)(question="How much did the valve caps cost?")
    assert result.status == "fail" and "inside `scripted_readers.reading(example)`" in result.reason
    with pytest.raises(ValueError, match="unknown reader"):
        reader_lm("capable")


def test_ferret_eval_reader_reports_the_bounds_and_refusals(small_corpus, tmp_path, capsys):
    qa = tmp_path / "qa.jsonl"
    qa.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    summaries = {}
    for kind, seeds in (("oracle", "1"), ("wrong", "2")):
        assert main(["eval", "--dataset", "jsonl", "--data", str(qa), "--index", str(small_corpus.store.dir),
                     "--split", "all", "--reader", kind, "--seeds", seeds, "--json"]) == 0
        summaries[kind] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    oracle, wrong = summaries["oracle"], summaries["wrong"]
    assert wrong["mlflow_run_id"] and (wrong["n"], wrong["seeds"]) == (6, 2)  # tracked: a row a question and seed
    assert oracle["lm"] == "scripted/oracle" and oracle["mlflow_run_id"] and oracle["n"] == 3
    assert oracle["stated_right"] == pytest.approx(2 / 3, abs=1e-3) and oracle["refused_not_shown"] == pytest.approx(1 / 3, abs=1e-3)
    assert oracle["answer_shown"] == pytest.approx(2 / 3, abs=1e-3) and oracle["evidence_shown"] == 1.0
    assert oracle["wrong_stated"] == 0.0 and oracle["refused_not_grounded"] == 0.0
    assert wrong["reader"] == "wrong" and wrong["stated_right"] == 0.0 and wrong["wrong_stated"] == 0.0
    assert "refused_not_shown" not in wrong
    assert main(["eval", "--dataset", "jsonl", "--data", str(qa), "--index", str(small_corpus.store.dir),
                 "--reader", "oracle", "--lm", "local"]) == 2
    assert "--reader" in capsys.readouterr().err


def test_eval_seeds_draw_the_wrong_readers_choice_again_and_average_the_runs(small_corpus, tmp_path, capsys):
    qa = tmp_path / "qa.jsonl"
    qa.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    rows = []
    summary = evaluate("jsonl", qa, small_corpus.store.dir, split_name="all", track=False, reader="wrong", seeds=4,
                       on_row=rows.append)
    assert [row["reader_seed"] for row in rows] == [seed for seed in range(4) for _ in QUESTIONS]
    assert summary["n"] == 12 and summary["seeds"] == 4
    drawn = {row["result"]["candidate"] for row in rows if row["id"] == "tires"}
    assert len(drawn) >= 2  # another seed, another wrong value printed on the receipt
    assert summary["wrong_stated"] == pytest.approx(sum(row["status"] == "answer" and row["accuracy"] != 1.0
                                                        for row in rows) / 12, abs=1e-4)
    with pytest.raises(ValueError, match="--seeds"):
        evaluate("jsonl", qa, small_corpus.store.dir, split_name="all", track=False, reader="oracle", seeds=2)
    assert main(["eval", "--dataset", "jsonl", "--data", str(qa), "--index", str(small_corpus.store.dir),
                 "--reader", "oracle", "--seeds", "2"]) == 2
    assert "--reader wrong" in capsys.readouterr().err


def test_a_verdict_is_stated_with_the_two_figures_its_gold_gives_once_they_are_shown_and_the_wrong_reader_swaps_them():
    example = dspy.Example(id="verdict", question="Did Acme's sales increase in FY2023?",
                           answer="Yes, sales rose from 100.5 in FY2022 to 120 in FY2023. Demand was strong.",
                           evidence=[{"doc_id": "acme", "page": 3}])
    shown, other = Shown(1, "acme", 3, "", "Sales  120  100.5"), Shown(1, "acme", 3, "", "Sales rose.")
    with reading(example) as record:
        assert oracle_answer(record, [shown]).answer == "Yes, sales rose from 100.5 in FY2022 to 120 in FY2023."
        assert oracle_answer(record, [other]).answer == "Yes"  # figures it was not shown are not stated
        assert wrong_answer(record, [shown]).answer == "No, sales rose from 120 in FY2022 to 100.5 in FY2023."
        assert wrong_answer(record, [other]).answer == "No"


def test_the_oracle_states_a_count_it_counted_which_no_passage_prints():
    example = dspy.Example(id="count", question="How many years did Acme's sales exceed $100 million?", answer="2",
                           derivation="2019##2018", evidence=[{"doc_id": "acme", "page": 3}])
    with reading(example) as record:
        said = oracle_answer(record, [Shown(1, "acme", 3, "", "Sales  120  110  90")])
        assert (said.answer, said.sources, said.calculation) == ("2", [1], "")
        assert oracle_answer(record, [Shown(1, "other", 1, "", "Sales  120  110  90")]) is None  # no evidence shown


@pytest.mark.parametrize("derivation, answer, calculation", [
    ("2,664/909", "2.93", "2,664/909"),  # operands without spaces: no range "664/909", no date
    ("(2,664-909)/909", "193.07", "((2,664-909)/909) * 100"),  # a percentage written as its ratio
    ("(2.7%+2.0%+1.0%)/3", "1.9", "(2.7%+2.0%+1.0%)/3"),  # already a percentage; the 3 it divides by is no page's
])
def test_the_oracle_states_the_calculation_that_gives_the_gold_over_operands_the_passages_print(
        derivation, answer, calculation):
    example = dspy.Example(id="ratio", question="What is the ratio?", answer=answer, derivation=derivation,
                           scale="percent" if "%" in derivation or "-" in derivation else "",
                           evidence=[{"doc_id": "imft", "page": 1}])
    page = "Total assets  $2,664  $3,025\nTotal liabilities  $909  $1,305\nRates  2.7%  2.0%  1.0%"
    with reading(example) as record:
        said = oracle_answer(record, [Shown(1, "imft", 1, "", page)])
        assert (said.calculation, said.sources) == (calculation, [1])
        assert oracle_answer(record, [Shown(1, "imft", 1, "", "Total assets  $2,664  $3,025")]) is None  # 909 not shown


def test_the_wrong_reader_states_a_number_that_prints_its_own_unit_as_printed():
    example = dspy.Example(id="rate", question="What was the change in the tax rate from 2018 to 2019?", answer="0",
                           scale="percent", evidence=[{"doc_id": "acme", "page": 1}])
    with reading(example) as record:
        assert wrong_answer(record, [Shown(1, "acme", 1, "", "The rate held; tax paid was $2.1 billion.")]).answer \
            == "$2.1 billion"  # not "$2.1 billion%"
        assert wrong_answer(record, [Shown(1, "acme", 1, "", "The rate held at 21 in both years.")]).answer == "21%"


def test_the_oracle_states_a_written_one_sentence_gold_as_the_gist_of_the_evidence_shown():
    """A gold written as one sentence ("... changed from 20% in FY2021 to 23% in FY2022.") is the evidence's gist,
    not words any page prints: the oracle states it once an evidence passage is shown; a short text gold it states
    only where a passage prints it."""
    written = dspy.Example(id="rate", question="How much has Acme's effective tax rate changed between FY2021 and FY2022?",
                           answer="The effective tax rate of Acme has changed from 20% in FY2021 to 23% in FY2022.",
                           evidence=[{"doc_id": "acme", "page": 3}])
    page = Shown(1, "acme", 3, "", "Effective tax rate  23%  20%")
    with reading(written) as record:
        said = oracle_answer(record, [page])
        assert (said.answer, said.sources) == ("The effective tax rate of Acme has changed from 20% in FY2021 to 23% in FY2022.", [1])
        assert oracle_answer(record, [Shown(1, "other", 1, "", "Effective tax rate  23%  20%")]) is None  # no evidence
    short = dspy.Example(id="auditor", question="Who audits Acme?", answer="Ernst & Young",
                         evidence=[{"doc_id": "acme", "page": 3}])
    with reading(short) as record:
        assert oracle_answer(record, [page]) is None
