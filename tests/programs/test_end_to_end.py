"""The real embedded model (Qwen2.5-Coder-0.5B through llama.cpp) on a real FinanceBench filing."""
from __future__ import annotations

import json

import dspy
import pytest

from ferret.corpus.chunks import build_chunks
from ferret.corpus.ingest import ingest
from ferret.corpus.store import Store
from ferret.corpus.tools import Corpus
from ferret.programs.arithmetic import compute, format_result
from ferret.programs.baselines import OneShotRAG
from ferret.programs.iterative import IterativeRetriever
from ferret.programs.lm import lm_name, make_lm
from ferret.programs.result import RESULT_FIELDS
from ferret.programs.summaries import ChunkSummarizer
from ferret.programs.verify import value_on_page
from ferret.signatures.types import Finding
from tests.conftest import SHARED_DATA, shared

DOC = "FOOTLOCKER_2022_8K_dated-2022-05-20"
QUESTION = "Were there any board member nominees who had substantially more votes against joining than the other nominees?"


@pytest.fixture(scope="module")
def filing(tmp_path_factory, pdf) -> Corpus:
    index = tmp_path_factory.mktemp("e2e") / "index"
    ingest([pdf(DOC)], index)
    return Corpus(index)


def check_structure(result, corpus: Corpus) -> None:
    assert set(RESULT_FIELDS) <= set(result.keys())
    assert result.status in ("answer", "needs", "clarify", "fail")
    assert result.lm_calls >= 1 and result.tokens["input"] > 0 and result.tokens["output"] > 0
    for citation in result.citations:
        text = corpus.page_text(citation["doc_id"], citation["page"])
        if citation["verified"]:
            assert text is not None
    assert result.citations_verified == (bool(result.citations) and all(c["verified"] for c in result.citations)
                                         and not result.unverified_numbers)


def test_iterative_retriever_runs_on_the_embedded_model(filing):
    with dspy.context(lm=make_lm("local"), adapter=dspy.JSONAdapter()):
        result = IterativeRetriever(filing, max_iterations=2)(question=QUESTION, doc_id=DOC)
    check_structure(result, filing)
    steps = [step["step"] for step in result.trajectory]
    assert steps[:2] == ["route", "read"]
    assert "extract" not in steps  # the small-model profile: the two iterations are the reads
    if result.status != "answer":  # no Synthesis over what refused reads kept: the failure decided in code
        assert steps[-1] == "synthesize" and result.trajectory[-1]["decided_in_code"]
    for finding in result.findings:  # every kept finding has real provenance
        assert filing.page_text(finding["doc_id"], finding["page"]) is not None
    for citation in result.citations:  # a citation verifies exactly when its value is on its page
        finding = next(f for f in result.findings if (f["doc_id"], f["page"]) == (citation["doc_id"], citation["page"]))
        assert citation["verified"] == value_on_page(Finding(**finding), filing.page_text(DOC, citation["page"]))


def test_oneshot_runs_on_the_embedded_model(filing):
    with dspy.context(lm=make_lm("local"), adapter=dspy.JSONAdapter()):
        result = OneShotRAG(filing)(question=QUESTION, doc_id=DOC)
    check_structure(result, filing)
    assert result.lm_calls == 1 and result.evidence and all(e["doc_id"] == DOC for e in result.evidence)


def test_a_list_question_on_the_sample_corpus_runs_on_the_embedded_model(sample_index):
    """The embedded Router reads the sample's overview; whichever route it picks, the result is valid,
    and a structured answer is one that every cited row verifies."""
    corpus = Corpus(sample_index)
    with dspy.context(lm=make_lm("local"), adapter=dspy.JSONAdapter()):
        result = IterativeRetriever(corpus, max_iterations=1)(question="Which receipts contain tires?")
    check_structure(result, corpus)
    assert result.trajectory[0]["step"] == "route"
    structured = [step for step in result.trajectory if step["step"] == "structured"]
    if structured and result.status == "answer":  # every row the answer counts is cited, and verifies
        assert result.citations_verified and len(result.citations) == len(result.findings) <= len(result.rows)


@pytest.fixture(scope="module")
def tatqa_context(tmp_path_factory) -> tuple[Corpus, str]:
    """A TAT-QA context (its table of sales by contract type, 2017-2019, and its paragraphs), ingested."""
    contexts = json.loads(shared(SHARED_DATA / "tatqa" / "tatqa_dataset_dev.json").read_text())
    uid = "3ffd9053-a45d-491c-957a-1b2fa0af0570"
    folder = tmp_path_factory.mktemp("tatqa")
    (folder / "context.json").write_text(json.dumps([c for c in contexts if c["table"]["uid"] == uid]))
    ingest([folder / "context.json"], folder / "index")
    return Corpus(folder / "index"), uid


def test_the_first_rung_computes_in_code_on_the_embedded_model(tatqa_context):
    """One of the context's arithmetic questions that no table rung takes (a ratio): whatever the 0.5B
    model reads, a computed answer is the calculation's value computed in code, every operand cited on
    its page; otherwise the first rung's failure and its reason are recorded."""
    corpus, uid = tatqa_context
    with dspy.context(lm=make_lm("local"), adapter=dspy.JSONAdapter()):
        result = IterativeRetriever(corpus, max_iterations=1)(
            question="What is the ratio of Other sales to Total sales in 2019?", doc_id=uid)
    check_structure(result, corpus)
    read = result.trajectory[1]
    assert read["step"] == "read"
    if read["succeeded"]:
        assert result.lm_calls == 2
    if read["succeeded"] and result.computation:
        assert result.answer == format_result(compute(result.computation).value) and result.citations_verified
    elif not read["succeeded"]:
        assert result.failed_searches[0]["reason"] == read["reason"] and read["reason"]


def test_a_change_of_the_questions_table_row_is_computed_in_code_before_the_embedded_model_is_asked(tatqa_context):
    """TAT-QA's "percentage change in Other in 2019 from 2018" (gold -22.22): the table rung writes
    (44.1 - 56.7) / 56.7 * 100 from the Other row's cells before the Router, and the embedded model is
    never called."""
    corpus, uid = tatqa_context
    with dspy.context(lm=make_lm("local"), adapter=dspy.JSONAdapter()):
        result = IterativeRetriever(corpus, max_iterations=1)(
            question="What is the percentage change in Other in 2019 from 2018?", doc_id=uid)
    assert set(RESULT_FIELDS) <= set(result.keys())
    assert [step["step"] for step in result.trajectory] == ["table"] and result.lm_calls == 0
    assert result.tokens["input"] == 0 and result.tokens["output"] == 0
    assert result.status == "answer" and result.answered_by == "table" and result.grounding == "grounded"
    assert result.computation == "(44.1 - 56.7) / 56.7 * 100" and result.answer == format_result(-22.2222222)
    assert result.citations_verified and len(result.citations) == 2
    assert [value in " ".join(c["quote"] for c in result.citations) for value in ("44.1", "56.7")] == [True, True]


def test_the_embedded_model_states_no_wrong_value_of_the_demos_lookup_as_fact(sample_index):
    """The demo's lookup (the page's segment table prints every segment's revenue for both years): whatever
    the 0.5B model reads, an answer the program states is grounded and is the Consumer row's 2022 value;
    any other value comes back as an unconfirmed candidate, never as a grounded answer."""
    corpus = Corpus(sample_index)
    with dspy.context(lm=make_lm("local"), adapter=dspy.JSONAdapter()):
        result = IterativeRetriever(corpus, max_iterations=2)(question="What was Consumer segment revenue in 2022?",
                                                               doc_id="northwind-annual-report-2023")
    assert result.lm_calls >= 1 and result.status in ("answer", "needs", "clarify", "fail")
    if result.status == "answer":
        assert result.grounding == "grounded" and "380.1" in result.answer
    else:
        assert result.answer == "" and not (result.candidate and result.grounding == "grounded")


def test_the_embedded_model_summarizes_a_chunk_of_a_real_filing(real_corpus, tmp_path):
    """`ingest --summaries local` on one chunk of Costco's 10-K: the model's summary is kept, each sentence
    on a page of the chunk that prints a passage it names."""
    sections, segments = real_corpus.store.sections_and_segments("COSTCO_2021_10K")
    chunk = build_chunks(sections, segments)[1]
    summarizer = ChunkSummarizer("local")
    summarizer(Store(tmp_path / "index", create=True), [chunk], segments)
    assert (summarizer.written, summarizer.failed) == (1, 0)
    assert chunk.summarizer == make_lm("local").model == lm_name("local") and chunk.summary
    pages = {segment.page for segment in segments[chunk.first:chunk.last + 1]}
    assert all(page in pages and sentence.strip() for page, sentence in chunk.summary)
