"""The real embedded model (Qwen2.5-Coder-0.5B through llama.cpp) on a real FinanceBench filing."""
from __future__ import annotations

import dspy
import pytest

from corpus.ingest import ingest
from corpus.tools import Corpus
from programs.baselines import OneShotRAG
from programs.iterative import IterativeRetriever
from programs.lm import make_lm
from programs.result import RESULT_FIELDS
from programs.verify import value_on_page
from signatures.types import Finding

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
        result = IterativeRetriever(filing, max_iterations=1)(question=QUESTION, doc_id=DOC)
    check_structure(result, filing)
    assert result.trajectory[0]["step"] == "route" and any(s["step"] == "extract" for s in result.trajectory)
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
