"""The iterative retriever: one looping dspy.Module whose steps are typed signatures.

question → Router → loop (at most `max_iterations`):
    shopping item → Extraction (fresh context; the strategy's search runs first, then the agent may
    call up to `agent_steps` more tools: fetch_section, neighbors, search_text) → Evaluator → findings appended, or a FailedSearch recorded
    → Synthesis over findings and failures only (never raw text): answer | needs | clarify | fail
→ Rerank of all evidence → citations verified against the stored pages.

What to try next is `programs.strategy.Policy` (plain Python): escalate by cost after a failure,
re-anchor on the best earlier hit, never repeat a failed (item, strategy), replan after repeated
failure. Malformed LM output never crashes a question: it becomes a recorded failure.
"""
from __future__ import annotations

import json
from collections import deque
from pathlib import Path

import dspy

from corpus.tools import Corpus
from programs.result import error_text, measured
from programs.strategy import Attempt, Policy, Strategy, ladder
from programs.verify import verify
from signatures import Evaluator, Extraction, Planner, Rerank, Router, Synthesis
from signatures.types import FailedSearch, Finding, RouteDecision

MAX_SECTIONS_SHOWN = 30
MAX_EVIDENCE = 20
STEPS = ("route", "extract", "evaluate", "synthesize", "plan", "rerank")


def load_corpus(corpus: Corpus | str | Path) -> Corpus:
    return corpus if isinstance(corpus, Corpus) else Corpus(corpus)


class IterativeRetriever(dspy.Module):
    """Answer a question over a corpus by iterative, failure-aware retrieval with verified citations.

    `lms` maps step names (route, extract, evaluate, synthesize, plan, rerank) to per-step LMs, e.g. a
    cheap LM for routing and extraction and a stronger one for synthesis; unset steps use the
    configured default LM.
    """

    def __init__(self, corpus: Corpus | str | Path, max_iterations: int = 4, top_k: int = 4,
                 context_chars: int = 400, agent_steps: int = 2, lms: dict[str, dspy.LM] | None = None):
        super().__init__()
        self.corpus = load_corpus(corpus)
        self.max_iterations = max_iterations
        self.top_k = top_k
        self.context_chars = context_chars
        self.route = dspy.Predict(Router)
        self.extract = dspy.ReAct(Extraction, tools=[self.corpus.fetch_section, self.corpus.neighbors,
                                                     self.corpus.search_text], max_iters=agent_steps)
        self.evaluate = dspy.Predict(Evaluator)
        self.synthesize = dspy.ChainOfThought(Synthesis)
        self.plan = dspy.Predict(Planner)
        self.rerank = dspy.Predict(Rerank)
        self.on_step = None  # optional callback receiving each trajectory step as it happens (CLI progress)
        for step, lm in (lms or {}).items():
            if step not in STEPS:
                raise ValueError(f"unknown step {step!r} in lms; steps: {', '.join(STEPS)}")
            getattr(self, step).set_lm(lm)

    def forward(self, question: str, doc_id: str | None = None, bucket: str | None = None) -> dspy.Prediction:
        return measured(lambda: self._answer(_Run(question, doc_id, bucket, self.on_step)))

    def _answer(self, state: "_Run") -> dspy.Prediction:
        question = state.question
        decision = self._route(state)
        policy = Policy(ladder(decision.route, decision.fallbacks, document_scoped=state.doc_id is not None))
        items = deque(decision.subqueries if decision.intent in ("compute", "compare") and decision.subqueries
                      else [question])
        synthesis = None
        for iteration in range(self.max_iterations):
            item = items[0] if items else question
            strategy = policy.next(item)
            if strategy is None:
                state.log("strategy", {"item": item, "exhausted": True})
                break
            succeeded, resolved = self._extract(state, policy, item, strategy, list(items)[1:])
            if succeeded:
                for done in [item, *resolved]:
                    if done in items:
                        items.remove(done)
            if policy.should_replan():
                items = deque(self._replan(state) or items)
            synthesis = self._synthesize(state, iteration)
            if synthesis["status"] != "needs":
                break
            if synthesis["need"] and synthesis["need"] not in items:
                items.appendleft(synthesis["need"])
        return self._result(state, synthesis, self._rerank(state))

    # --- steps --------------------------------------------------------------------------------------
    def _route(self, state: "_Run") -> RouteDecision:
        try:
            decision = self.route(question=state.question, corpus_overview=self.corpus.overview()).decision
        except Exception as error:  # malformed output: fall back to the default route, and say so
            state.log("route", {"error": error_text(error)})
            return RouteDecision(subqueries=[])
        if state.bucket is None and len(decision.buckets) == 1 and decision.buckets[0] in self.corpus.schemas:
            state.bucket = decision.buckets[0]
        known = self.corpus.filter_fields(state.bucket)
        state.filters = {c.field: {c.op: c.value} for c in decision.constraints if c.field in known}
        state.log("route", {**decision.model_dump(), "dropped_constraints": [
            c.field for c in decision.constraints if c.field not in known]})
        return decision

    def _extract(self, state: "_Run", policy: Policy, item: str, strategy: Strategy,
                 open_items: list[str]) -> tuple[bool, list[str]]:
        results, anchors = self._search(state, item, strategy)
        step = {"item": item, "strategy": strategy.describe(), "results": len(anchors)}
        findings: list[Finding] = []
        reason, sections = "", []
        try:
            extraction = self.extract(question=state.question, shopping_item=item,
                                      section_index=self._section_index(state.doc_id),
                                      failed_searches=state.failures, results=results)
            findings = [f for f in extraction.findings if self._has_provenance(f)]
            reason, sections = extraction.failure_reason, extraction.sections_searched
            step["tools"] = [v for k, v in extraction.trajectory.items() if k.startswith("tool_name")]
        except Exception as error:
            reason = f"extraction failed: {error_text(error)}"
        answered, resolved = False, []
        if findings:
            try:
                judgement = self.evaluate(shopping_item=item, findings=findings, open_subqueries=open_items)
                valid = [findings[i] for i in dict.fromkeys(judgement.valid_findings) if 0 <= i < len(findings)]
                answered = bool(judgement.answered and valid)
                findings, resolved = valid, [q for q in judgement.resolved_subqueries if q in open_items]
                reason = reason if answered else (judgement.reason or "findings did not answer the item")
            except Exception as error:
                reason = f"evaluation failed: {error_text(error)}"
        if answered:
            state.findings.extend(findings)
        else:
            state.failures.append(FailedSearch(item=item, strategy=strategy.describe(),
                                               reason=reason or "no finding answered the item",
                                               sections_tried=list(sections)))
        policy.record(Attempt(item, strategy, answered, anchors))
        step.update(findings=[f.model_dump() for f in findings] if answered else [], succeeded=answered,
                    reason=None if answered else state.failures[-1].reason)
        state.log("extract", step)
        return answered, resolved

    def _search(self, state: "_Run", item: str, strategy: Strategy) -> tuple[str, list[tuple[str, float]]]:
        """Run the strategy's own search (the agent's first tool call) and format its results."""
        corpus, scope_doc = self.corpus, state.doc_id if strategy.scope != "global" else None
        try:
            if strategy.scope == "anchor":
                hits = self._anchor_hits(strategy.anchor)
            elif strategy.method == "annotations":
                hits = corpus.annotations_search(item, filters=state.filters or None, bucket=state.bucket,
                                                 top_k=self.top_k, doc_id=scope_doc)
            elif strategy.method == "select":
                return "No search was run: read the section index and fetch the sections likely to hold the item.", []
            else:
                search = corpus.search_semantic if strategy.method == "semantic" else corpus.search_text
                hits = search(item, bucket=state.bucket, filters=state.filters or None, top_k=self.top_k,
                              context_chars=self.context_chars, doc_id=scope_doc)
        except ValueError as error:  # e.g. a filter on a field the bucket does not have
            return f"The search failed: {error}", []
        anchors = [(hit.get("node_id") or hit.get("annotation_id"), hit["score"]) for hit in hits]
        return _format_hits(hits) or "No results.", anchors

    def _anchor_hits(self, node_id: str) -> list[dict]:
        """The anchor's section, read in full (within budget), as one result."""
        parent = next((n for n in self.corpus.neighbors(node_id) if n["relation"] == "parent"), None)
        if parent is None or parent["kind"] != "section":
            return []
        doc_id, _, section_id = parent["node_id"][len("sec:"):].rpartition(":")
        section = self.corpus.fetch_section(doc_id, section_id, max_tokens=self.context_chars)
        return [{"doc_id": doc_id, "page": section["pages"][0], "section": section["title"],
                 "text": section["text"], "node_id": node_id, "score": 1.0}]

    def _section_index(self, doc_id: str | None) -> str:
        if doc_id is None:
            return "(several documents; use search tools)"
        rows = self.corpus.section_index(doc_id)
        shown = [r for r in rows if r["level"] <= 2][:MAX_SECTIONS_SHOWN]
        return "\n".join(f"{r['id']}: {r['title']} (pp. {r['pages'][0]}-{r['pages'][1]})" for r in shown)

    def _has_provenance(self, finding: Finding) -> bool:
        return self.corpus.page_text(finding.doc_id, finding.page) is not None

    def _replan(self, state: "_Run") -> list[str]:
        try:
            subqueries = self.plan(question=state.question, findings=state.findings,
                                   failed_searches=state.failures).subqueries[:2]
        except Exception as error:
            state.log("plan", {"error": error_text(error)})
            return []
        state.log("plan", {"subqueries": subqueries})
        return [q for q in subqueries if q.strip()]

    def _synthesize(self, state: "_Run", iteration: int) -> dict:
        try:
            out = self.synthesize(question=state.question, findings=state.findings, failed_searches=state.failures)
            synthesis = {key: out[key] for key in ("status", "answer", "sources", "confidence", "need",
                                                   "need_reason", "clarification")}
        except Exception as error:
            synthesis = {"status": "needs", "answer": "", "sources": [], "confidence": 0.0,
                         "need": "", "need_reason": f"synthesis failed: {error_text(error)}", "clarification": ""}
        state.log("synthesize", {"iteration": iteration + 1, **synthesis})
        return synthesis

    def _rerank(self, state: "_Run") -> list[Finding]:
        findings = state.findings[:MAX_EVIDENCE]
        if len(findings) < 2:
            return findings
        try:
            ranking = self.rerank(question=state.question, evidence=[_evidence(f) for f in findings]).ranking
        except Exception as error:
            state.log("rerank", {"error": error_text(error)})
            return findings
        order = [i for i in dict.fromkeys(ranking) if 0 <= i < len(findings)]
        return [findings[i] for i in order] + [f for i, f in enumerate(findings) if i not in order]

    def _result(self, state: "_Run", synthesis: dict | None, evidence: list[Finding]) -> dspy.Prediction:
        synthesis = synthesis or {"status": "fail", "answer": "", "sources": [], "confidence": 0.0, "need": "",
                                  "need_reason": "no strategy left to try", "clarification": ""}
        status = synthesis["status"]
        check = verify(synthesis["answer"] if status == "answer" else "", synthesis["sources"] if status == "answer" else [],
                       state.findings, self.corpus.page_text, self.corpus.file_of)
        return dspy.Prediction(
            status=status, answer=synthesis["answer"] if status == "answer" else "",
            confidence=synthesis["confidence"], need=synthesis["need"], reason=synthesis["need_reason"],
            clarification=synthesis["clarification"],
            citations=[c.model_dump() for c in check.citations],
            citations_verified=check.ok, unverified_numbers=check.unverified_numbers,
            findings=[f.model_dump() for f in state.findings],
            failed_searches=[f.model_dump() for f in state.failures],
            evidence=[{"doc_id": f.doc_id, "page": f.page, "section": f.section, "label": f.label} for f in evidence],
            iterations=sum(1 for step in state.trajectory if step["step"] == "extract"),
            trajectory=state.trajectory,
        )


class _Run:
    """The mutable state of one question: findings append, failures are recorded, every step logged."""

    def __init__(self, question: str, doc_id: str | None, bucket: str | None, on_step=None):
        self.question, self.doc_id, self.bucket, self.on_step = question, doc_id, bucket, on_step
        self.filters: dict = {}
        self.findings: list[Finding] = []
        self.failures: list[FailedSearch] = []
        self.trajectory: list[dict] = []

    def log(self, step: str, data: dict) -> None:
        self.trajectory.append({"step": step, **json.loads(json.dumps(data, default=str))})
        if self.on_step is not None:
            self.on_step(self.trajectory[-1])


def _format_hits(hits: list[dict]) -> str:
    lines = []
    for number, hit in enumerate(hits, start=1):
        head = f"[{number}] doc_id={hit['doc_id']} page={hit['page']} section={hit.get('section', '')!r}"
        if "label" in hit:
            fields = "; ".join(f"{k}: {v}" for k, v in hit["fields"].items())
            lines.append(f"{head}\n{hit['label']}: {hit['value_text']}" + (f" ({fields})" if fields else ""))
        else:
            lines.append(f"{head}\n{hit['text']}")
    return "\n\n".join(lines)


def _evidence(finding: Finding) -> str:
    return f"{finding.label}: {finding.value} {finding.unit or ''} ({finding.doc_id} p. {finding.page}) {finding.context}"
