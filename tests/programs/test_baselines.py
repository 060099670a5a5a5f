"""One-shot RAG and the single ReAct agent with the scripted fake LM, and `ferret ask`."""
from __future__ import annotations

import json

import dspy

from ferret.programs.baselines import OneShotRAG, ReActAgent
from ferret.programs.result import RESULT_FIELDS
from tests.fakes import scripted_lm

QUESTION = "What was total revenue in 2023?"


def ask(program, script, **kwargs):
    lm, engine = scripted_lm(script)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        return program(question=QUESTION, doc_id="report", **kwargs), engine


def test_oneshot_answers_from_passages_and_verifies_its_citation(small_corpus):
    def answer(inputs):
        passages = json.loads(inputs["passages"])
        table = next(i for i, p in enumerate(passages) if "Total revenue  3,650" in p)
        return {"answer": "Total revenue in 2023 was 3,650.", "sources": [table]}

    result, engine = ask(OneShotRAG(small_corpus), {"answer": answer})
    assert engine.steps() == ["answer"]
    assert result.status == "answer" and result.citations_verified
    assert [(c["doc_id"], c["page"], c["verified"]) for c in result.citations] == [("report", 1, True)]
    assert result.evidence and result.lm_calls == 1 and set(RESULT_FIELDS) <= set(result.keys())


def test_oneshot_flags_a_number_in_no_passage(small_corpus):
    result, _ = ask(OneShotRAG(small_corpus), {"answer": {"answer": "Revenue was 7,777.", "sources": [0]}})
    assert not result.citations_verified and result.unverified_numbers == ["7,777"]


def test_react_agent_calls_tools_then_cites_pages(small_corpus):
    act = [{"next_thought": "search", "next_tool_name": "search_text",
            "next_tool_args": {"query": "total revenue", "doc_id": "report"}},
           {"next_thought": "done", "next_tool_name": "finish", "next_tool_args": {}}]
    final = {"answer": "Total revenue in 2023 was 3,650.", "sources": [{"doc_id": "report", "page": 1}]}
    result, engine = ask(ReActAgent(small_corpus), {"act": act, "answer": final})
    assert engine.steps() == ["act", "act", "answer"]
    second_turn = [inputs for step, inputs in engine.calls if step == "act"][1]
    assert "Total revenue  3,650" in second_turn["observation_0"]  # the tool really ran
    assert result.status == "answer" and result.citations_verified and result.iterations == 2
    wrong_page = {**final, "sources": [{"doc_id": "report", "page": 9}]}
    result, _ = ask(ReActAgent(small_corpus), {"act": act, "answer": wrong_page})
    assert not result.citations_verified and result.citations[0]["verified"] is False


def test_ferret_ask_json(small_corpus, monkeypatch, capsys):
    import ferret.programs.lm
    from ferret.cli import main
    from tests.programs.test_iterative import ACCEPT, ANSWER, FOUND

    lm, _ = scripted_lm({"extract": FOUND, "evaluate": ACCEPT, "synthesize": ANSWER})
    monkeypatch.setattr(ferret.programs.lm, "make_lm", lambda spec=None: lm)
    assert main(["ask", QUESTION, "--index", str(small_corpus.store.dir), "--doc", "report", "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["status"] == "answer" and out["citations"][0]["page"] == 1
    assert set(out) >= {"status", "answer", "citations", "findings", "failed_searches", "iterations", "lm_calls",
                        "tokens", "seconds"} and set(out["tokens"]) == {"input", "output", "cached"}
