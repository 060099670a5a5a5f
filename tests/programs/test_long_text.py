"""The long_text route with the scripted LM: the first read sees the passages inside the chunk whose
summary matches the question, and that summary's leading sentences; off (the default), the plain hybrid read."""
from __future__ import annotations

import dspy

from ferret.corpus.tools import Corpus
from ferret.programs.iterative import SUMMARY_SENTENCES, IterativeRetriever
from tests.fakes import scripted_lm

QUESTION = "How could cybersecurity incidents and currency exchange rates harm results?"
LONG_TEXT = {"decision": {"intent": "explain", "route": "long_text"}}


def first_read(long_report, route=LONG_TEXT, doc_id=None, **options):
    lm, engine = scripted_lm({"route": route})
    corpus = Corpus(long_report)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = IterativeRetriever(corpus, max_iterations=1, **options)(question=QUESTION, doc_id=doc_id)
    passages = [inputs["passages"] for step, inputs in engine.calls if step == "read"][0]
    return result, passages, corpus


def test_the_long_text_route_reads_inside_the_best_chunk_and_its_summary(long_report):
    result, passages, corpus = first_read(long_report, long_text=True)
    (step,) = [step for step in result.trajectory if step["step"] == "long_text"]
    best = step["chunks"][0]
    assert best["title"] == "Risk"
    first, last = corpus.store.conn.execute("SELECT first_segment, last_segment FROM chunks WHERE id = ?",
                                            (int(best["chunk"].split(":")[1]),)).fetchone()
    read = [s for s in result.trajectory if s["step"] == "read"][0]
    summary = corpus.summary_hits(best["chunk"], SUMMARY_SENTENCES)
    assert len(summary) == SUMMARY_SENTENCES and all(passages.count(hit["text"]) == 1 for hit in summary)  # each once
    found = corpus.search_long_text(QUESTION, top_k=5, context_chars=600)["hits"]
    shown = " ".join(" ".join(hit["text"].split()) for hit in found)
    assert len(found) == 5 and read["rung"] == "long_text"
    assert read["results"] == 5 + sum(hit["text"] not in shown for hit in summary)  # a sentence a passage holds is not read twice
    assert "(Risk)" in passages and "(Liquidity)" not in passages and "(Employees)" not in passages
    for hit in summary:  # each summary sentence is a passage of the chunk, on the page that prints it
        ord_, page = corpus.store.conn.execute("SELECT ord, page FROM segments WHERE id = ?",
                                               (int(hit["node_id"][4:]),)).fetchone()
        assert first <= ord_ <= last and page == hit["page"] and hit["text"] in corpus.page_text("report", page).replace("\n", " ")


def test_without_the_route_the_first_read_is_the_plain_hybrid_search(long_report):
    result, passages, _ = first_read(long_report)  # off by default
    assert not [step for step in result.trajectory if step["step"] == "long_text"]
    assert [s for s in result.trajectory if s["step"] == "read"][0]["rung"] == "read"


def test_a_question_about_one_long_document_is_read_inside_its_chunks_whatever_the_route(long_report):
    hybrid = {"decision": {"intent": "explain", "route": "hybrid"}}
    result, passages, _ = first_read(long_report, hybrid, doc_id="report", long_text=True)
    assert [s for s in result.trajectory if s["step"] == "read"][0]["rung"] == "long_text"
    assert "(Risk)" in passages and "(Employees)" not in passages
    result, _, _ = first_read(long_report, hybrid, long_text=True)  # the whole corpus, not routed long_text
    assert [s for s in result.trajectory if s["step"] == "read"][0]["rung"] == "read"
