"""optimizers.metrics on real gold answers of FinanceBench, TAT-QA, HotpotQA and SciFact."""
from __future__ import annotations

import csv
import io
import zipfile

import dspy
import pytest

from ferret.optimizers.datasets import load_financebench, load_hotpotqa, load_tatqa
from ferret.optimizers.metrics import (METRICS, answer_correct, answered, citations_verified, evidence_all, evidence_any,
                                       evidence_recall, exact_match, feedback_metric, make_judge_metric, mrr_at_10,
                                       token_f1)
from ferret.signatures.judge import JUDGE_PROMPT_VERSION, JudgeAnswer
from tests.conftest import FINANCEBENCH, SHARED_DATA, shared
from tests.fakes import scripted_lm


@pytest.fixture(scope="module")
def financebench():
    return {example.id: example for example in load_financebench(shared(FINANCEBENCH))[0]}


@pytest.fixture(scope="module")
def tatqa():
    return {example.id: example for example in load_tatqa(shared(SHARED_DATA / "tatqa"))[0]}


@pytest.fixture(scope="module")
def hotpotqa():
    return {example.id: example for example in load_hotpotqa(shared(SHARED_DATA / "hotpotqa"))[0]}


def said(answer: str, status: str = "answer", **fields) -> dspy.Prediction:
    return dspy.Prediction(status=status, answer=answer, **fields)


def check(example: dspy.Example, right: list[str], wrong: list[str]) -> None:
    assert [answer for answer in right if not answer_correct(example, said(answer))] == []
    assert [answer for answer in wrong if answer_correct(example, said(answer))] == []


def test_financebench_gold_in_usd_millions(financebench):
    inventories = financebench["financebench_id_04417"]  # "... Answer in USD millions." -> "$5409.00"
    assert inventories.answer == "$5409.00" and "USD millions" in inventories.question
    check(inventories,
          right=["Best Buy's FY2019 inventories were $5,409 million.", "5409", "$5.409 billion", "USD 5,409m",
                 "Inventories were $5,409.3 million."],  # "$5409.00": a whole number, to which 5,409.3 rounds
          wrong=["$5.41 billion", "$5,409 thousand", "$5,490 million", "$5,409.6 million"])


def test_a_gold_printed_with_zero_cents_is_a_whole_number_that_a_more_precise_answer_matches():
    """FinanceBench prints whole millions with cents ("$382.00" for a cash flow of $381,603 thousand): an answer in
    the asked units that rounds to it matches; a small gold keeps its precision ("1.00" is not 1.4)."""
    cash = dspy.Example(question="How much cash did Block generate from operating activities in FY2020? Answer in "
                                 "USD millions.", answer="$382.00")
    check(cash, right=["381.603", "$381.6 million", "$382 million"], wrong=["381.4", "$0.38 billion", "383"])
    check(dspy.Example(question="What was the quick ratio?", answer="1.00"), right=["1.004", "1"], wrong=["1.4", "0.99"])


def test_financebench_ratio_and_negative_golds_at_their_precision(financebench):
    check(financebench["financebench_id_04735"],  # 0.66, "Round your answer to two decimal places."
          right=["The operating cash flow ratio is 0.66.", "0.664"], wrong=["0.7", "0.67", "66"])
    check(financebench["financebench_id_04103"],  # -3.7
          right=["The FY2019 CCC was -3.7 days.", "(3.7) days"], wrong=["3.7 days", "-3.8"])
    check(financebench["financebench_id_07507"],  # 65.4%
          right=["Operating income grew 65.4% year over year."], wrong=["65%", "64.5%"])


def test_financebench_sentence_golds(financebench):
    check(financebench["financebench_id_00552"],  # "No. Microsoft decreased its debt by $2.5bn ..."
          right=["No, debt fell by about $2.5 billion."], wrong=["Yes, Microsoft increased its debt.", "Debt fell."])
    check(financebench["financebench_id_01928"],  # "AMCOR's Adj. EBITDA was $2,018mn in FY 2023"
          right=["Adjusted EBITDA was $2,018 million in FY2023.", "$2.018 billion"],
          wrong=["Adjusted EBITDA was $2,108 million.", "AMCOR's Adj. EBITDA grew in FY 2023."])
    check(financebench["financebench_id_00605"],  # "36%. The answer here assumes FY2023 refers to the 12 months ..."
          right=["About 36% of the year's repurchases were in Q4."], wrong=["63%"])


def test_refusals_and_empty_answers_are_wrong(financebench):
    example = financebench["financebench_id_04417"]
    for pred in (said("$5,409 million", status="fail"), said("$5,409 million", status="needs"), said("  ")):
        assert [metric(example, pred) for metric in (answer_correct, exact_match, token_f1, answered)] == [0.0] * 4
    assert answered(example, said("I could not find it.")) == 1.0
    assert answer_correct(example, said("I could not find it.")) == 0.0


def test_tatqa_negatives_in_parentheses_or_words(tatqa):
    allowance = tatqa["e55e41d5-e383-45b1-ae23-300683714307"]  # ["(168)"], scale thousand
    assert allowance.answer == ["(168)"] and allowance.scale == "thousand"
    check(allowance, right=["$(168) thousand", "-168", "-$168,000", "a loss of $168 thousand"],
          wrong=["168", "$168 thousand", "-$168 million", "-16.8"])
    change = tatqa["05b670d3-5b19-438c-873f-9bf6de29c69e"]  # -22.22, scale percent
    assert change.answer == -22.22 and change.scale == "percent"
    check(change, right=["-22.22%", "(22.22)%", "Other decreased by 22.22%.", "−22.22 percent"],
          wrong=["22.22%", "-22.2%", "-22%", "Other increased by 22.22%."])
    literal = dspy.Example(question="What was the change?", answer="(3.2)%")
    check(literal, right=["-3.2%", "It fell 3.2%."], wrong=["3.2%", "-3.4%"])


def test_tatqa_scale_thousand_and_million(tatqa):
    deposits = tatqa["d2c13ab2-4201-4b36-b1a5-833c24bf2777"]  # ["5,687"], scale thousand
    assert deposits.answer == ["5,687"] and deposits.scale == "thousand"
    check(deposits, right=["$5,687 thousand", "5,687", "$5.687 million", "$5,687,000"],
          wrong=["$5,687 million", "5.7 million", "5,678"])
    loss = tatqa["4db3c092-5b29-4715-baa8-f923802df170"]  # ["$(9.8) million"], no scale field
    check(loss, right=["A net loss of $9.8 million.", "-$9.8 million", "$(9.8) million"],
          wrong=["A net profit of $9.8 million.", "-$9.8 billion"])


def test_tatqa_every_item_of_a_list_gold_is_needed(tatqa):
    carryforwards = tatqa["c3993366-da98-42f2-a5b2-3de28c4d0e10"]  # ["73,260", "57,768"], thousand
    check(carryforwards, right=["$73,260 thousand in 2019 and $57,768 thousand in 2018"],
          wrong=["$73,260 thousand in 2019"])
    countries = tatqa["617cd0f0-5fac-4c34-b9b6-425a0d353491"]  # ["Greece and Turkey"]
    check(countries, right=["Greece and Turkey", "The group has plans in Greece and Turkey."],
          wrong=["Greece", "Turkey and Greece"])
    contracts = tatqa["593c4388-5209-4462-8b83-b429c8612c25"]  # fixed-price, cost-plus, time-and-material type
    check(contracts, right=["Fixed-price type, cost-plus type and time-and-material type contracts."],
          wrong=["Fixed-price type and cost-plus type."])
    assert exact_match(countries, said("greece and turkey!")) == 1.0


def test_a_list_gold_matches_its_items_anywhere_in_a_long_answer():
    receipts = dspy.Example(question="Which receipts contain tires?", answer=["inv-0003", "inv-0011"])
    long = "2 documents match 'tires': " + "; ".join(["inv-0003 (Tires 205/55R16, four all-season tires fitted)"] * 8)
    check(receipts, right=[long + "; inv-0011 (Winter tires)."], wrong=[long + "; inv-0012 (Winter tires)."])


def test_an_expected_fail_or_clarify_is_correct_only_in_that_status():
    absent = dspy.Example(question="What was the CEO's salary in 2019?", answer="", expected_status="fail")
    assert answer_correct(absent, said("", status="fail")) == 1.0
    assert answer_correct(absent, said("$1.2 million")) == 0.0 and answer_correct(absent, said("", "clarify")) == 0.0
    ambiguous = dspy.Example(question="What is the notice period?", answer="", expected_status="clarify")
    assert answer_correct(ambiguous, said("", status="clarify")) == 1.0
    assert answer_correct(ambiguous, said("90 days")) == 0.0


def test_hotpotqa_text_golds(hotpotqa):
    check(hotpotqa["5a7c1f325542996dd594b892"],  # "The Exies"
          right=["The Exies", "exies", "The Exies were formed first, in 1997."], wrong=["Circus Diablo"])
    check(hotpotqa["5a8718c25542991e771816c7"],  # "Stephen King"
          right=["Maximum Overdrive was directed by Stephen King."], wrong=["Stephen Kingsley", "King"])
    long_answer = "Stephen King " + "and many other people " * 8
    assert answer_correct(hotpotqa["5a8718c25542991e771816c7"], said(long_answer)) == 0.0  # not a short answer
    check(hotpotqa["5a8e40795542995a26add496"],  # "150 million"
          right=["over 150 million records", "150,000,000"], wrong=["15 million", "150 thousand"])
    check(hotpotqa["5ac3983a554299657fa290f5"], right=["The population was 6,960."], wrong=["6,690"])  # "6,960"


def test_hotpotqa_yes_no(hotpotqa):
    both_directors = hotpotqa["5ae40c465542996836b02c25"]  # "yes"
    check(both_directors, right=["Yes", "Yes, both are film directors."], wrong=["No", "Both direct films."])
    check(hotpotqa["5a9096d85542995651fb51a3"], right=["No, they are in different states."], wrong=["Yes."])


def test_exact_match_and_token_f1(hotpotqa):
    exies = hotpotqa["5a7c1f325542996dd594b892"]  # "The Exies"
    assert exact_match(exies, said("the exies.")) == 1.0 and token_f1(exies, said("the exies.")) == 1.0
    assert exact_match(exies, said("The Exies were first")) == 0.0
    assert token_f1(exies, said("The Exies were first")) == pytest.approx(2 * (1 / 3) * 1 / (1 / 3 + 1))
    assert token_f1(exies, said("Circus Diablo")) == 0.0


def pages(*items):
    return [{"doc_id": doc_id, "page": page, "section": ""} for doc_id, page in items]


def test_page_evidence_recall_and_mrr(financebench):
    example = financebench["financebench_id_04417"]
    (gold,) = {(item["doc_id"], item["page"]) for item in example.evidence}
    doc = gold[0]
    other = [(doc, page) for page in range(100, 110)]
    found_third = said("x", evidence=pages(other[0], other[0], other[1], gold, other[2]))  # duplicates count once
    assert evidence_recall(example, found_third) == 1.0 and mrr_at_10(example, found_third) == pytest.approx(1 / 3)
    assert evidence_all(example, found_third) == evidence_any(example, found_third) == 1.0
    found_seventh = said("x", evidence=pages(*other[:6], gold))
    assert evidence_recall(example, found_seventh) == 0.0 and evidence_recall(example, found_seventh, k=10) == 1.0
    assert mrr_at_10(example, found_seventh) == pytest.approx(1 / 7)
    wrong_doc = said("x", evidence=pages(("OTHER_DOC", gold[1])))
    assert evidence_any(example, wrong_doc) == mrr_at_10(example, wrong_doc) == 0.0
    assert evidence_recall(example, said("x", status="fail")) == 0.0


def test_passage_evidence_on_hotpotqa(hotpotqa):
    example = hotpotqa["5a8718c25542991e771816c7"]  # supporting titles: Leland, North Carolina; Maximum Overdrive
    assert [item["doc_id"] for item in example.evidence] == ["Leland, North Carolina", "Maximum Overdrive"]
    evidence = [{"doc_id": title, "page": None, "section": ""}
                for title in ["Maximum Overdrive", "Maximum Overdrive", "Stephen King", "Wilmington"]]
    pred = said("Stephen King", evidence=evidence)
    assert evidence_recall(example, pred) == 0.5 and mrr_at_10(example, pred) == 1.0
    assert evidence_any(example, pred) == 1.0 and evidence_all(example, pred) == 0.0


def test_scifact_evidence_only():
    archive = shared(SHARED_DATA / "scifact" / "scifact.zip")
    with zipfile.ZipFile(archive) as bundle:
        rows = list(csv.DictReader(io.TextIOWrapper(bundle.open("claims_validation.csv"), encoding="utf-8")))
    row = next(row for row in rows if len(row["cited_doc_ids"].strip("[]").split()) >= 2)
    cited = row["cited_doc_ids"].strip("[]").split()
    example = dspy.Example(question=row["claim"], answer="", evidence=[{"doc_id": doc_id} for doc_id in cited])
    pred = said("", evidence=[{"doc_id": doc_id, "page": None, "section": ""} for doc_id in ["0", *cited[:1]]])
    assert evidence_recall(example, pred) == pytest.approx(1 / len(cited)) and mrr_at_10(example, pred) == 0.5
    assert answer_correct(example, said("Supported.")) == 0.0  # no gold answer: never "correct"


def test_citations_verified_needs_an_answer_with_verified_citations():
    citation = {"doc_id": "d", "file": "d.pdf", "page": 3, "section": "", "quote": "x", "verified": True}
    example = dspy.Example(question="q", answer="1")
    assert citations_verified(example, said("1", citations=[citation], citations_verified=True)) == 1.0
    assert citations_verified(example, said("1", citations=[citation], citations_verified=False)) == 0.0
    assert citations_verified(example, said("1", citations=[], citations_verified=True)) == 0.0
    assert citations_verified(example, said("1", "fail", citations=[citation], citations_verified=True)) == 0.0


def test_metrics_table_names():
    assert list(METRICS) == ["accuracy", "exact_match", "f1", "answered", "citations_verified", "grounded",
                             "candidate_accuracy", "evidence_recall@5",
                             "evidence_recall_all@5", "evidence_recall_any@5", "mrr@10"]
    assert METRICS["accuracy"] is answer_correct and METRICS["mrr@10"] is mrr_at_10


def test_judge_metric_uses_the_lm_verdict(financebench):
    example = financebench["financebench_id_04417"]
    assert JUDGE_PROMPT_VERSION == "judge-v1" and set(JudgeAnswer.output_fields) == {"correct", "reason"}
    lm, engine = scripted_lm({"judge": [{"correct": True, "reason": "same amount"},
                                        {"correct": False, "reason": "different"}]})
    judge = make_judge_metric(lm)
    assert judge(example, said("$5.41 billion")) == 1.0  # lexically wrong, judged right
    assert judge(example, said("$5,409 million")) == 0.0  # lexically right, judged wrong
    assert engine.steps() == ["judge", "judge"]
    inputs = engine.calls[0][1]
    assert inputs["gold_answer"] == "$5409.00" and inputs["predicted_answer"] == "$5.41 billion"
    assert judge(example, said("$5,409 million", status="fail")) == 0.0 and len(engine.calls) == 2  # no call


def test_judge_metric_falls_back_to_answer_correct_on_malformed_output(tatqa):
    example = tatqa["d2c13ab2-4201-4b36-b1a5-833c24bf2777"]  # ["5,687"], thousand
    lm, engine = scripted_lm({"judge": ["I think it is probably fine", {"correct": "perhaps", "reason": "?"},
                                        {"reason": "no verdict"}, {"correct": False, "reason": "a typo"}]})
    judge = make_judge_metric(lm)
    assert judge(example, said("$5,687 thousand")) == 1.0  # not JSON: answer_correct decides
    assert judge(example, said("$5,678 thousand")) == 0.0  # "perhaps" is no bool: answer_correct decides
    assert judge(example, said("$5,687 thousand")) == 1.0  # no verdict: answer_correct decides
    assert judge(example, said("$5,687 thousand")) == 0.0  # a well-formed verdict wins
    assert engine.steps() == ["judge"] * 4
    assert engine.calls[0][1]["gold_answer"] == "5,687 (thousand)"


def test_feedback_names_the_missing_number_citations_and_evidence(financebench):
    example = financebench["financebench_id_04417"]
    (gold,) = {(item["doc_id"], item["page"]) for item in example.evidence}
    citation = {"doc_id": gold[0], "file": "", "page": 12, "section": "", "quote": "Merchandise inventories 5,174",
                "verified": False}
    pred = said("Inventories were $5,174 million.", citations=[citation], citations_verified=False,
                evidence=pages((gold[0], 12)))
    result = feedback_metric(example, pred)
    assert result.score == 0.0
    assert "$5409.00 (= 5,409,000,000) is missing or off" in result.feedback
    assert "the answer states: 5,174,000,000" in result.feedback
    assert f"failed verification: {gold[0]} p.12 'Merchandise inventories 5,174'" in result.feedback
    assert f"Gold evidence not among the retrieved evidence: {gold[0]} p.{gold[1]}" in result.feedback

    right = feedback_metric(example, said("$5,409 million", citations=[{**citation, "verified": True}],
                                          evidence=pages(gold)))
    assert right.score == 1.0 and right.feedback == "The answer is correct."


def test_feedback_on_a_refusal_and_on_a_text_gold(financebench, hotpotqa):
    refusal = feedback_metric(financebench["financebench_id_04417"],
                              said("", status="needs", reason="the balance sheet page was not found"))
    assert refusal.score == 0.0
    assert "did not answer (status 'needs': the balance sheet page was not found)" in refusal.feedback
    assert "the gold answer is '$5409.00'" in refusal.feedback
    text = feedback_metric(hotpotqa["5a7c1f325542996dd594b892"], said("Circus Diablo", citations=[]))
    assert "does not give the gold answer 'The Exies'" in text.feedback and "cites no sources" in text.feedback


def test_gepas_feedback_for_one_predictor_says_what_its_step_did(financebench):
    example = financebench["financebench_id_04417"]
    read = {"step": "read", "answer": "5,174", "succeeded": False, "reason": "the answer is not grounded (on_page)"}
    pred = said("", status="fail", reason="nothing grounded", trajectory=[{"step": "route"}, read])
    feedback = feedback_metric(example, pred, pred_name="read.predict").feedback
    assert "The read step ran 1 time(s); the last time, answer: 5,174; reason: the answer is not grounded" in feedback
    assert "The synthesize step did not run" in feedback_metric(example, pred, pred_name="synthesize.predict").feedback
    assert "step" not in feedback_metric(example, pred).feedback


def test_a_single_number_gold_is_judged_by_the_value_the_answer_states():
    """An operand, or one of several candidate values, equal to the gold is not a right answer."""
    check(dspy.Example(question="What was the revenue from Asia in 2019?", answer="6,577"),
          right=["6,577", "Asia's revenue was $6,577 in 2019. The total was $17,975."],
          wrong=["6577 + 6332 + 6059 + 245 + 4 = $17,975", "$877,052 $6,577 $3,142,308 $1,738,211",
                 "It was $6,332 or $6,577."])
    check(dspy.Example(question="What was the percentage change in Other from 2018 to 2019?", answer=-22.22),
          right=["(44.1 - 56.7) / 56.7 * 100 = -22.22", "Other fell 22.22% in 2019."],
          wrong=["(44.1 - 56.7) / 56.7 * 100 = -12.6", "44.1 or 56.7, down 22.22%"])
    check(dspy.Example(question="In which year was the amount for Sensors the largest?", answer="2019"),
          right=["2019"], wrong=["2018", "2019 or 2018"])
    check(dspy.Example(question="How many days' notice does the 2023 contract require?", answer="30 days"),
          right=["30 days' notice."], wrong=["The answer is 12.1"])


def test_candidate_accuracy_judges_the_unconfirmed_candidate_as_if_stated():
    example = dspy.Example(question="What was Consumer revenue in 2022?", answer="$380.1 million")
    unconfirmed = dspy.Prediction(status="fail", answer="", candidate="380.1 million", grounding="on_page")
    assert METRICS["accuracy"](example, unconfirmed) == 0.0 and METRICS["candidate_accuracy"](example, unconfirmed) == 1.0
    assert METRICS["grounded"](example, unconfirmed) == 0.0
    stated = dspy.Prediction(status="answer", answer="380.1 million", grounding="grounded")
    assert METRICS["grounded"](example, stated) == 1.0 and METRICS["candidate_accuracy"](example, stated) == 1.0
