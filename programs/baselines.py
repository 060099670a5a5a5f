"""Baselines to compare the iterative retriever against, returning the same result fields:
one-shot RAG (hybrid search top-k → one answer) and a single ReAct agent with all the tools."""
from __future__ import annotations

from pathlib import Path

import dspy
from dspy.utils.exceptions import DSPyError

from ferret.corpus.tools import Corpus
from ferret.programs.confirm import confirmed
from ferret.programs.grounding import GROUNDED, UNSUPPORTED, Grounding, check_accept, citation_levels, ground, settle
from ferret.programs.iterative import load_corpus
from ferret.programs.result import check_input, error_text, measured
from ferret.programs.settings import SavedSettings
from ferret.programs.verify import Verification, verify, verify_pages
from ferret.signatures import AgentAnswer, AnswerFromPassages, ConfirmAnswer
from ferret.signatures.types import Finding


def _result(question: str, corpus: Corpus, accept: str, confirm: dspy.Predict, answer: str, check: Verification,
            evidence: list[dict], iterations: int, trajectory: list, reason: str = "", rung: str = "read") -> dspy.Prediction:
    """The baseline's outcome: its answer stated when grounded at `accept` or better (a text value confirmed
    by `confirm`), else a "fail" with the answer as the unconfirmed candidate (`programs.grounding`)."""
    places = [(c.doc_id, c.page) for c in check.citations]
    grounding = confirmed(confirm, question, answer, ground(question, answer, None, places, corpus), accept) \
        if answer else Grounding(UNSUPPORTED, "")
    citation_levels(check.citations, grounding)
    status, answer, reason, candidate = settle("answer" if answer else "fail", answer,
                                               reason or ("" if answer else "no answer in what was retrieved"), grounding, accept)
    return dspy.Prediction(
        status=status, answer=answer, confidence=None, need="", clarification="", reason=reason,
        citations=[c.model_dump() for c in check.citations], citations_verified=check.ok,
        unverified_numbers=check.unverified_numbers, findings=[], failed_searches=[], evidence=evidence,
        iterations=iterations, trajectory=trajectory, rows=[], computation="", answered_by=rung if answer else "",
        grounding=grounding.level if answer or candidate else "", grounding_reason=grounding.reason,
        grounded_values=grounding.shown, candidate=candidate)


class OneShotRAG(SavedSettings, dspy.Module):
    """Hybrid search for the question, then one answer from the top-k passages."""

    SETTINGS = ("top_k", "context_chars")

    def __init__(self, corpus: Corpus | str | Path, top_k: int = 5, context_chars: int = 600, accept: str = GROUNDED):
        super().__init__()
        self.corpus = load_corpus(corpus)
        self.accept = check_accept(accept)
        self.top_k = top_k
        self.context_chars = context_chars
        self.answer = dspy.ChainOfThought(AnswerFromPassages)
        self.confirm = dspy.Predict(ConfirmAnswer)

    def forward(self, question: str, doc_id: str | None = None, bucket: str | None = None) -> dspy.Prediction:
        check_input(self.corpus, question, doc_id, bucket)
        return measured(lambda: self._answer(question, doc_id, bucket))

    def _answer(self, question: str, doc_id: str | None, bucket: str | None) -> dspy.Prediction:
        hits = self.corpus.search_text(question, bucket=bucket, top_k=self.top_k, context_chars=self.context_chars,
                                       doc_id=doc_id, hybrid=True)
        passages = [f"[{i}] {h['doc_id']} page {h['page']} ({h['section']}): {h['text']}" for i, h in enumerate(hits)]
        # each passage is a finding whose value is its own text, so citing it verifies against its page
        findings = [Finding(label=f"passage {i}", value=h["text"].strip("…"), doc_id=h["doc_id"], page=h["page"],
                            section=h["section"], context=h["text"]) for i, h in enumerate(hits)]
        try:
            out = self.answer(question=question, passages=passages)
            answer, sources, reason = out.answer.strip(), list(out.sources), ""
        except DSPyError as error:
            answer, sources, reason = "", [], f"answer failed: {error_text(error)}"
        check = verify(answer, sources if answer else [], findings, self.corpus.page_text, self.corpus.file_of)
        evidence = [{"doc_id": h["doc_id"], "page": h["page"], "section": h["section"]} for h in hits]
        return _result(question, self.corpus, self.accept, self.confirm, answer, check, evidence, 1, [{"step": "search", "hits": len(hits)},
                                                    {"step": "answer", "answer": answer, "sources": sources}], reason)


class ReActAgent(dspy.Module):
    """One ReAct agent with every corpus tool (the "agent mode"), citing the pages it read."""

    def __init__(self, corpus: Corpus | str | Path, max_iters: int = 6, accept: str = GROUNDED):
        super().__init__()
        self.corpus = load_corpus(corpus)
        self.accept = check_accept(accept)
        self.agent = dspy.ReAct(AgentAnswer, tools=self.corpus.tools(), max_iters=max_iters)
        self.confirm = dspy.Predict(ConfirmAnswer)

    def forward(self, question: str, doc_id: str | None = None, bucket: str | None = None) -> dspy.Prediction:
        check_input(self.corpus, question, doc_id, bucket)
        return measured(lambda: self._answer(question, doc_id))

    def _answer(self, question: str, doc_id: str | None) -> dspy.Prediction:
        try:
            out = self.agent(question=question, document=doc_id or "any")
            answer, pages, reason = out.answer.strip(), [(s.doc_id, s.page) for s in out.sources], ""
            steps = [{"step": "tool", "name": v} for k, v in out.trajectory.items() if k.startswith("tool_name")]
        except DSPyError as error:
            answer, pages, steps, reason = "", [], [], f"agent failed: {error_text(error)}"
        check = verify_pages(answer, pages if answer else [], self.corpus.page_text, self.corpus.file_of)
        evidence = [{"doc_id": d, "page": p, "section": ""} for d, p in pages]
        return _result(question, self.corpus, self.accept, self.confirm, answer, check, evidence, len(steps), steps, reason, rung="agent")
