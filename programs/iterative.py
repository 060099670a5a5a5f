"""The iterative retriever: one looping dspy.Module whose steps are typed signatures.

`forward` runs the steps below in order over one typed state (`programs.run.Run`): each step is
`(state) -> outcome | None`, the first outcome ends the question (`_answer`), and the last step always
gives one. A step whose LM call fails after DSPy's retries records the error and the question ends on it;
only DSPy's own errors (an LM call that failed, output that did not parse) are caught, never code's.

question → table rung, no LM (`programs.table_rung`): a change, percentage change or average between
  two years of the one table row the question names, or a filing's metric of a fiscal year from its
  statements' line items, or a verdict on its trend or sign, computed in code and settled like a read's
  calculation (no LM call at all when it grounds); when it does not, its failure is recorded and the
  program goes on
→ Router (intent, search terms, subqueries, route)
→ a list or aggregate question on the structured route is answered in code from annotations
  (`programs.structured`: filters widened when empty, an overload asks to narrow); when even that
  finds no row, the loop below runs on the other routes
→ first rung, the cheapest read that can answer: the question's top hybrid passages (the one-call
  baseline's search; with `long_text`, for a question about one long document or on the Router's
  "long_text" route, the top passages inside the document's chunks that match best, and the best one's
  summary's leading sentences: `Corpus.search_long_text`; with `hops_first`, the multi-hop search's
  passages; every search at the program's `lexical_weight`: `programs.first_read`) read by one
  typed step (ReadPassages) that answers with the passages it used, a calculation computed in code,
  or says what is missing (`programs.passage_answer`). An answer whose citations and numbers verify,
  with nothing said missing, ends the question (Router + read: 2 calls).
  Otherwise the values it read are kept as findings, its failure is recorded with the reason, and the
  ladder goes on without repeating its search (`Attempt.first_rung`).
→ hops rung, when the first read did not answer: the same read of the passages of a multi-hop search
  in code, no LM (`programs.hops.hop_search`: the question's top passages, then those of the bridge names
  they print and of each compared name), skipped when it finds no passage the first read did not read.
  With the small-model profile (`programs.repairs`: the embedded models only) a question worded as a
  comparison or a bridge (`programs.hops.hop_needed`) skips the first read for the hops read, and a
  comparison is first tried in code on each part's own page (`programs.comparison`, no LM). With any LM,
  a verdict or choice a step states that this comparison agrees with is grounded on those pages.
→ loop (the reads are the first of `max_iterations`; with the default two, the ladder runs only when the hops
  found nothing new to read, and with the small-model profile not then either: on the tracked train runs of
  the embedded model, the 40 questions it ran for got no right answer from it, docs/benchmarks.md):
    shopping item → the strategy's search (the item's words; for the question itself the label
    search of "annotations" uses the Router's entities and topic terms instead)
    → Extraction (fresh context: a short agent reads the results; on a "select" rung, where there is
      nothing to read yet, it first makes at most `agent_steps` tool calls: fetch_section, neighbors,
      search_text) → a finding whose value is not printed on its cited page is moved to the page of
      the results where it is printed, or dropped, in code
    → Evaluator, when findings are left → the findings it calls valid are kept; unless they
      answer the item a FailedSearch is recorded too (a part of a multi-hop answer, such as the
      bridge entity, is kept rather than thrown away with the failure)
    → Synthesis over findings and failures only (never raw text): answer | needs | clarify | fail
→ Rerank of the evidence after the first rung's passages → citations verified against the stored pages.

LM calls that cannot change the outcome are not made. A rung whose search finds nothing (the label
search of a corpus without annotations) is a failure recorded in code, with no extraction; so is a
passage search whose every passage an earlier step already read (on the three dev sets, the
extractions after the reads turned no question into a right answer, and most of what they read, the
reads had read: docs/benchmarks.md). Rerank runs only when its order can change the top `read_k` places
(distinct pages) of the evidence: the first rung's passages fill fewer, and the findings bring at least
two pages they do not. Synthesis runs after a step that kept new
findings (it already judged the older ones), and once more at the end with `last_chance`
(answer or fail) when findings exist but no answer came yet. With no kept finding at all it
could only say "needs", so the loop goes on without it and ends with "fail" and the recorded
failure reasons, decided in code. So does the small-model profile when every kept finding is a value of
a read whose answer the checks refused (the ladder did not run): a 0.5B Synthesis over them said "needs" or
"fail", or restated a refused value (docs/benchmarks.md). The Planner runs only when an iteration is left to use its items.

What to try next is `programs.strategy.Policy` (plain Python): escalate by cost after a failure,
re-anchor on the best earlier hit, never repeat a failed (item, strategy), replan after repeated
failure. Malformed LM output never crashes a question: it becomes a recorded failure (a malformed agent
tool step, its rung's).
"""
from __future__ import annotations

from collections import deque
from dataclasses import replace
from pathlib import Path

import dspy
from dspy.utils.exceptions import DSPyError

from ferret.corpus.tools import HYBRID, Corpus, check_weight
from ferret.programs import DEFAULT_ITERATIONS
from ferret.programs.arithmetic import SUM_ASKED
from ferret.programs.capabilities import Computed, capability_tools, computed_results
from ferret.programs.comparison import Comparison, compare
from ferret.programs.confirm import confirmed
from ferret.programs.first_read import ReadSettings, first_read
from ferret.programs.grounding import GROUNDED, LEVELS, UNSUPPORTED, Grounding, at_least, check_accept, citation_levels, ground, settle
from ferret.programs.hops import hop_needed, hop_search
from ferret.programs.nearest_demos import NearestDemos
from ferret.programs.passage_answer import PassageAnswer, answer_from_passages
from ferret.programs.repairs import repairs_on, step_lm
from ferret.programs.row_arithmetic import named_rows, row_passage
from ferret.programs.result import check_input, measured, outcome
from ferret.programs.run import Run
from ferret.programs.settings import SavedSettings
from ferret.programs.table_rung import table_read
from ferret.programs.strategy import Attempt, Policy, Strategy, ladder
from ferret.programs.structured import (ROW_LIMIT, answer_from_annotations, asked_aggregate, asked_list, grounded, item_words,
                                        nothing_matched, table_query, year_filter)
from ferret.programs.verify import finding_number, value_on_page, verify
from ferret.signatures import ConfirmAnswer, Evaluator, Extraction, Planner, ReadPassages, Rerank, Router, Synthesis
from ferret.signatures.router import EXAMPLES as ROUTER_EXAMPLES
from ferret.signatures.types import FailedSearch, Finding, RouteDecision

MAX_SECTIONS_SHOWN = 60
SECTION_TOKENS = 800  # budget of one section read (the agent's fetch_section, the neighbors rung)
MAX_ITEM_CHARS = 150  # a shopping item names one value; a longer "item" from the LM is a copied failure or ramble
MAX_EVIDENCE = 20
READ_ROWS = 2  # table rows the question names, read by the first rung beside its passages
READ_RUNGS = ("table", "read", "long_text", "hops", "comparison", "table_calculation")  # one read settles them: no Rerank
STEPS = ("route", "read", "confirm", "extract", "evaluate", "synthesize", "plan", "rerank")
SECTIONS_NOT_SHOWN = "(not shown: read the results)"
SUMMARY_SENTENCES = 2  # of the chosen chunk's summary, read beside its passages on the long_text route
REREAD_SKIPPED = ("hybrid", "semantic")  # passage searches not read again when an earlier step read every
# passage they found (the neighbors rung reads a read passage's whole section; a select rung picks its own)


def load_corpus(corpus: Corpus | str | Path) -> Corpus:
    return corpus if isinstance(corpus, Corpus) else Corpus(corpus)


class IterativeRetriever(SavedSettings, dspy.Module):
    """Answer a question over a corpus by iterative, failure-aware retrieval with verified citations.

    `lms` maps step names (route, read, confirm, extract, evaluate, synthesize, plan, rerank) to per-step LMs, e.g. a
    cheap LM for routing and extraction and a stronger one for synthesis; unset steps use the
    configured default LM.
    """

    SETTINGS = ("max_iterations", "top_k", "context_chars", "agent_steps", "row_limit", "read_k", "read_chars", "repairs",
                "long_text", "demo_k", "lexical_weight", "hops_first")

    def __init__(self, corpus: Corpus | str | Path, max_iterations: int = DEFAULT_ITERATIONS, top_k: int = 4,
                 context_chars: int = 400, agent_steps: int = 1, row_limit: int = ROW_LIMIT,
                 read_k: int = 5, read_chars: int = 600, lms: dict[str, dspy.LM] | None = None,
                 accept: str = GROUNDED, repairs: bool | None = None, long_text: bool = False, demo_k: int = 0,
                 lexical_weight: float = HYBRID, hops_first: bool = False):
        """`max_iterations`: the first two are the reads (the default, DEFAULT_ITERATIONS); more run the ladder.
        `read_k` passages of `read_chars` characters are the first rung's read (the one-call
        baseline's); `top_k` results of `context_chars` each step of the loop after it. `accept`: the
        lowest grounding (`programs.grounding`) an answer is stated with; a read grounded below it
        does not end the question, and a final answer below it becomes a "fail" with the answer as its
        unconfirmed candidate ("on_page" keeps every verified answer). `repairs`: the small-model
        repairs (`programs.repairs`), on or off; None decides by each step's LM (on for the embedded
        models). `long_text`: a question about one document (`doc_id`), or that the Router routes to
        "long_text", is first read inside the chunks of a long document that match it best (`_question_hits`);
        off (the default: that search finds more of FinanceBench's evidence pages than hybrid search, but on
        its dev 20 the program answered as many right with it and stated one wrong, docs/benchmarks.md), it
        is read as any other. `demo_k`: each read is shown the `demo_k` of its demos nearest to the question
        (`programs.nearest_demos`; a compile's pool, `ferret compile --optimizer knn`); 0 shows them all.
        `lexical_weight` weighs BM25 against dense search in the reads' searches and the ladder's hybrid
        rung (1 BM25 alone, 0 dense alone; `Corpus.search`); `hops_first`: the first read is shown the
        multi-hop search's passages (`programs.first_read`). A settings compile chooses these three for a
        corpus from its labeled evidence (`ferret compile --optimizer settings`).
        The settings but `lms` and `accept` are saved with the program's state (`SavedSettings`)."""
        super().__init__()
        self.corpus = load_corpus(corpus)
        self.accept = check_accept(accept)
        self.repairs = repairs
        self.long_text = long_text
        self.lexical_weight = check_weight(lexical_weight)
        self.hops_first = hops_first
        self.max_iterations = max_iterations
        self.top_k = top_k
        self.context_chars = context_chars
        self.read_k = read_k
        self.read_chars = read_chars
        self.agent_steps = agent_steps
        self.row_limit = row_limit
        self.demo_k = demo_k
        self.nearest_demos = NearestDemos(self.corpus)
        self.route = dspy.Predict(Router)
        self.route.demos = list(ROUTER_EXAMPLES)  # worked readings: the saved state's, until a compile bootstraps its own
        self.read = dspy.ChainOfThought(ReadPassages)
        self.confirm = dspy.Predict(ConfirmAnswer)
        self.extract = dspy.ReAct(Extraction, tools=self._tools(), max_iters=agent_steps)
        self.evaluate = dspy.Predict(Evaluator)
        self.synthesize = dspy.ChainOfThought(Synthesis)
        self.plan = dspy.Predict(Planner)
        self.rerank = dspy.Predict(Rerank)
        self.on_step = None  # optional callback receiving each trajectory step as it happens (CLI progress)
        for step, lm in (lms or {}).items():
            if step not in STEPS:
                raise ValueError(f"unknown step {step!r} in lms; steps: {', '.join(STEPS)}")
            getattr(self, step).set_lm(lm)

    def forward(self, question: str, doc_id: str | None = None, bucket: str | None = None,
                tried: list[dict] | None = None) -> dspy.Prediction:
        """`tried`: searches that already failed for this question (a conversation's pending question,
        now clarified): the steps see them as this run's own failures."""
        check_input(self.corpus, question, doc_id, bucket)
        state = Run(question, doc_id, bucket, on_step=self.on_step,
                    hop_wait=hop_needed(question) if repairs_on(self.repairs, step_lm(self.read)) else "",
                    failures=[FailedSearch.model_validate(failure) for failure in tried or []])
        return measured(lambda: self._result(state, self._answer(state)))

    def _answer(self, state: Run) -> dict:
        """The outcome of the first step that settles the question; each step is `(state) -> outcome | None`,
        and the last (`_last_chance`) always settles it. Once a step's LM call failed after DSPy's retries
        (an HTTP error, a rate limit, a timeout), the question ends as a failure naming the error: the next
        steps would call the same LM."""
        for step in (self._table, self._route, self._first_read, self._compare, self._hops, self._ladder,
                     self._last_chance):
            settled = step(state)
            if state.lm_error:
                settled = outcome("fail", reason=f"the LM failed: {state.lm_error}")
            if settled is not None:
                break
        return settled

    # --- the steps, in order ------------------------------------------------------------------------
    def _table(self, state: Run) -> dict | None:
        """The table rung (`programs.table_rung`), before the Router and any read, settled as a read's
        calculation; None, with nothing recorded, when the question is none of its kinds."""
        if (table := table_read(self.corpus, state.question, state.bucket, state.doc_id)) is None:
            return None
        state.show(table.hits)
        step = {"rung": "table", "strategy": f"table: {table.how}, computed in code", "results": len(table.hits),
                "calculation": table.expression, "answer": table.read.answer, "lm_call": False}
        return self._settle(state, "table", step, table.hits, table.read, table.read.problem)

    def _route(self, state: Run) -> dict | None:
        """The Router's reading (`_routed`) and the ladder of strategies it implies (`strategy.ladder`); a list or
        aggregate question on the structured route answered in code from annotations (`programs.structured`:
        filters widened when empty, an overload asks to narrow); when even that finds no row, the steps after
        run on the other routes."""
        state.decision = decision = self._routed(state)
        rungs = ladder(decision.route, decision.fallbacks, document_scoped=state.doc_id is not None,
                       filtered=bool(state.routed_bucket or state.filters))
        query = None if state.lm_error else table_query(decision, self.corpus, state.question,
                                                         state.bucket or state.routed_bucket, state.doc_id)
        if query is not None:
            table = answer_from_annotations(self.corpus, query, state.question, self.row_limit)
            state.table_attempts = table.attempts
            state.log("structured", {"op": query.op, "attempts": table.attempts, "rows": len(table.rows)})
            if table.outcome is not None:
                state.rung = "structured"
                state.answered(table.findings, derived=table.derived, rows=table.rows)
                return table.outcome
            rungs = [rung for rung in rungs if rung.method != "annotations"]  # widened and still empty
        state.policy = Policy(rungs)
        return None

    def _first_read(self, state: Run) -> dict | None:
        """The first rung: the question's passages read by one typed step (`_read`). The small-model profile
        skips it for a question worded as a comparison or a bridge (`hop_wait`): a 0.5B read answers from half
        the way."""
        return None if state.hop_wait else self._read(state, *self._question_hits(state, state.decision.route))

    def _compare(self, state: Run) -> dict | None:
        """The small-model profile's comparison rung, no LM, for a question worded as a comparison (`hop_wait`):
        the question's parts compared on their own pages (`programs.comparison`), settled as a read's answer
        whose grounding is the comparison's: each part's value printed in its page's sentence; None, with
        nothing recorded, when the comparison does not decide."""
        found = self._comparison(state) if state.hop_wait else None
        if found is None:
            return None
        hits = [side.hit for side in found.sides]
        state.show(hits)
        step = {"rung": "comparison", "strategy": f"comparison ({found.kind}): each part on its own page, in code",
                "results": len(hits), "answer": found.answer, "values": found.shown, "lm_call": False}
        return self._settle(state, "comparison", step, hits, PassageAnswer(found.answer, found.findings), "",
                            found.grounding())

    def _comparison(self, state: Run) -> Comparison | None:
        """The question's comparison decided in code (`programs.comparison`), computed once a question."""
        if state.comparison is None:
            state.comparison = (compare(state.question, self.corpus, bucket=state.bucket, doc_id=state.doc_id),)
        return state.comparison[0]

    def _hops(self, state: Run) -> dict | None:
        """The hops rung: the read (`_read`) of a multi-hop search's passages (`_hop_hits`), when it found one
        the first read did not read."""
        hits = self._hop_hits(state, state.hop_wait)
        return self._read(state, hits, "hops") if hits else None

    def _ladder(self, state: Run) -> dict | None:
        """The loop after the reads (which are the first of `max_iterations`): each shopping item searched by the
        strategy the policy picks (`_extract`), Synthesis after a step that kept new findings; its outcome
        once it is not "needs", else None. With the small-model profile the reads take two iterations even
        when the hops found nothing new to read (module docstring)."""
        decision, policy = state.decision, state.policy
        subqueries = [q for q in decision.subqueries if _is_item(q)] if decision.intent in ("compute", "compare") else []
        items = deque(subqueries or [state.question])
        reads = sum(1 for step in state.trajectory if step["step"] == "read")
        if repairs_on(self.repairs, step_lm(self.extract)):  # the reads' two iterations, though the hops read none
            reads = max(reads, DEFAULT_ITERATIONS)
        for iteration in range(reads, self.max_iterations):
            item = items[0] if items else state.question
            strategy = policy.next(item)
            if strategy is None:
                state.log("strategy", {"item": item, "exhausted": True})
                return None
            known = len(state.findings)
            succeeded, resolved, settled = self._extract(state, item, strategy, list(items)[1:])
            if settled is not None:
                return settled
            if succeeded:
                for done in [item, *resolved]:
                    if done in items:
                        items.remove(done)
            if state.lm_error or iteration == self.max_iterations - 1:
                return None
            if policy.should_replan():
                items = deque(self._replan(state) or items)
            if state.lm_error:
                return None
            if len(state.findings) == known:  # nothing new: Synthesis already judged every kept finding
                continue
            synthesis = self._synthesize(state, last_chance=False)
            if state.lm_error or synthesis["status"] != "needs":
                return synthesis
            if _is_item(synthesis["need"]) and synthesis["need"] not in items:
                items.appendleft(synthesis["need"])
        return None

    def _last_chance(self, state: Run) -> dict:
        """Synthesis with `last_chance` (answer or fail) over every finding kept, whichever rung found it; with
        none, the failure decided in code (`_nothing_found`). So too with the small-model profile when every
        finding is a value of a read whose answer the checks refused (the ladder did not run): a 0.5B Synthesis
        over them restated a refused value or said "needs" anyway (module docstring)."""
        state.rung = "synthesis"
        if not state.findings:
            return self._nothing_found(state)
        if repairs_on(self.repairs, step_lm(self.synthesize)) and not any(
                step["step"] == "extract" for step in state.trajectory):
            rungs = ", ".join(dict.fromkeys(step["rung"] for step in state.trajectory if step.get("rung")))
            synthesis = outcome("fail", reason=f"no answer passed the checks ({rungs})")  # each one's why: failed_searches
            state.log("synthesize", {"decided_in_code": True, **synthesis})
            return synthesis
        return self._synthesize(state, last_chance=True)

    # --- what the steps call ------------------------------------------------------------------------
    def _routed(self, state: Run) -> RouteDecision:
        """The Router's decision; with the small-model repairs, its aggregate only when the question asks
        for one (`asked_aggregate`), a "lookup" of a question that asks which things match, across
        the corpus, read as a list, a question that ends "in total" (`SUM_ASKED`) sent to the
        structured route, where sums are computed (with no matching row the loop runs as routed), and a
        list or such a sum whose terms the question does not hold is given the question's own (`item_words`),
        and the one year it names as a filter on a date field in scope when the Router set none
        (`year_filter`).
        A question about one document gets no corpus overview (a 0.5B Router copies what it lists into
        every field), so it gets no metadata filters or bucket either."""
        overview = "one given document" if state.doc_id else self.corpus.overview()
        try:
            decision = self.route(question=state.question, corpus_overview=overview).decision
        except DSPyError as error:  # malformed output: fall back to the default route, and say so
            state.log("route", {"error": state.error(error)[1]})
            return RouteDecision(subqueries=[])
        if state.bucket is None and state.doc_id is None and len(decision.buckets) == 1 \
                and decision.buckets[0] in self.corpus.schemas:
            state.routed_bucket = decision.buckets[0]
        known = set() if state.doc_id else self.corpus.filter_fields(state.bucket or state.routed_bucket)
        state.filters = {c.field: {c.op: c.value} for c in decision.constraints if c.field in known}
        state.terms = " ".join(dict.fromkeys(term for term in [*decision.entities, *decision.topic_terms] if term.strip()))
        repair = repairs_on(self.repairs, step_lm(self.route))
        aggregate = asked_aggregate(decision.aggregate, state.question) if repair else decision.aggregate
        listed = repair and decision.intent == "lookup" and state.doc_id is None and asked_list(state.question)
        sum_asked = repair and aggregate == "sum" and bool(SUM_ASKED.search(state.question))
        summed = sum_asked and decision.route != "structured"
        in_scope = state.bucket or state.routed_bucket
        over_rows = sum_asked or listed or (repair and decision.intent == "list")  # not "total revenue": a lookup
        unnamed = over_rows and not grounded([*decision.entities, *decision.topic_terms], state.question) \
            and item_words(state.question, self.corpus.filter_fields(in_scope) | set(self.corpus.store.bucket_schemas()))
        dated = year_filter(decision.constraints, state.question, self.corpus.date_fields(in_scope)) \
            if over_rows and state.doc_id is None else None
        state.log("route", {**decision.model_dump(), "dropped_constraints": [
            c.field for c in decision.constraints if c.field not in known],
            **({"dropped_aggregate": decision.aggregate} if aggregate != decision.aggregate else {}),
            **({"list_from_wording": True} if listed else {}), **({"structured_from_wording": True} if summed else {}),
            **({"terms_from_wording": unnamed} if unnamed else {}),
            **({"year_from_wording": dated.model_dump()} if dated else {})})
        return decision.model_copy(update={"aggregate": aggregate, **({"intent": "list"} if listed else {}),
                                           **({"topic_terms": [unnamed]} if unnamed else {}),
                                           **({"constraints": [*decision.constraints, dated]} if dated else {}),
                                           **({"route": "structured", "fallbacks": [decision.route, *decision.fallbacks]}
                                              if summed else {})})

    def _question_hits(self, state: Run, route: str) -> tuple[list[dict], str]:
        """The first rung's passages and its name (`programs.first_read`, by the program's `read_settings`);
        on the long_text route, the best chunk's summary's leading sentences after its passages."""
        found = first_read(self.corpus, state.question, self.read_k, self.read_settings, route, state.bucket,
                           state.doc_id, self.read_chars)
        if not found.chunks:
            return found.hits, found.rung
        chunk = found.chunks[0]
        state.log("long_text", {"chunks": [{"chunk": hit["node_id"], "title": hit["section"], "pages": hit["pages"]}
                                           for hit in found.chunks], "doc_id": chunk["doc_id"]})
        shown = " ".join(" ".join(hit["text"].split()) for hit in found.hits)
        summary = [hit for hit in self.corpus.summary_hits(chunk["node_id"], SUMMARY_SENTENCES) if hit["text"] not in shown]
        return found.hits + summary, found.rung

    @property
    def read_settings(self) -> ReadSettings:
        """The first read's retrieval settings."""
        return ReadSettings(self.lexical_weight, self.hops_first, self.long_text)

    @read_settings.setter
    def read_settings(self, settings: ReadSettings) -> None:
        self.lexical_weight, self.hops_first, self.long_text = (check_weight(settings.lexical_weight),
                                                                settings.hops_first, settings.long_text)

    def first_read_hits(self, question: str, doc_id: str | None = None, bucket: str | None = None) -> list[dict]:
        """What the first rung reads for a question on the hybrid route: its passages and the table rows it
        names (labeled demos of the read are built from them, `optimizers.gold_demos`)."""
        state = Run(question, doc_id=doc_id, bucket=bucket)
        return self._question_hits(state, "hybrid")[0] + self._question_rows(state)

    def answered_in_code(self, question: str, doc_id: str | None = None, bucket: str | None = None) -> bool:
        """True when the table rung settles the question before any LM step, so the read never sees it
        (labeled demos of the read are built from the questions it does see, `optimizers.gold_demos`)."""
        return self._table(Run(question, doc_id=doc_id, bucket=bucket)) is not None

    def _hop_hits(self, state: Run, why: str) -> list[dict]:
        """The hops rung's passages (`programs.hops`, no LM): the question's top passages, then those of the
        bridges they name and of the parts a comparison joins; [] when they hold no passage the first
        rung did not already read."""
        hops = hop_search(self.corpus, state.question, self.read_k, bucket=state.bucket, doc_id=state.doc_id,
                          context_chars=self.read_chars, lexical_weight=self.lexical_weight)
        new = {hit["node_id"] for hit in hops.hits} - {hit["node_id"] for hit in state.read_hits}
        state.log("hops", {"why": why or "the first read did not answer", "bridges": hops.bridges, "parts": hops.parts,
                           "passages": [{"doc_id": h["doc_id"], "page": h["page"], "via": h["via"]} for h in hops.hits],
                           **({} if new else {"skipped": "no passage the first read did not read"})})
        return hops.hits if new else []

    def _read(self, state: Run, hits: list[dict], rung: str) -> dict | None:
        """One typed read of `hits` (the first rung's, or the hops rung's) and the question's table rows, settled (`_settle`)."""
        state.show(hits)
        state.read_ids |= {hit["node_id"] for hit in hits}
        hits = hits + self._question_rows(state)
        step = {"rung": rung, "strategy": f"{rung}: {self._read_strategy(state).describe()}", "results": len(hits)}
        try:
            out = self.read(question=state.question, passages=numbered_passages(hits, state.doc_id),
                            demos=self.nearest_demos(self.read.predict.demos, state.question, self.demo_k))
        except DSPyError as error:
            reason, step["error"] = state.error(error, "the read output was malformed")
            return self._settle(state, "read", step, hits, None, reason)
        calculation = out.calculation.expression
        read = answer_from_passages(state.question, hits, calculation, out.answer, list(out.sources),
                                    repair=repairs_on(self.repairs, step_lm(self.read)))
        step.update(calculation=calculation, answer=read.answer, sources=list(out.sources))
        return self._settle(state, "read", step, hits, read, out.missing.strip() or read.problem)

    def _settle(self, state: Run, name: str, step: dict, hits: list[dict],
                read: PassageAnswer | None, reason: str, grounding: Grounding | None = None) -> dict | None:
        """A read's outcome when its answer stands (nothing said missing, every number printed on a cited
        page or computed in code from printed values, citations on their pages, grounded: by `grounding`
        when the rung grounded its answer itself, else `_ground`); else None,
        with the values it read kept as findings and its failure recorded (a read's on the ladder's rung
        of the same search, which is not tried again). Only an answer it states makes its rung the question's."""
        if read is not None and not reason:
            check = verify(read.answer, list(range(len(read.findings))), read.findings, self.corpus.page_text,
                           self.corpus.file_of, read.derived)
            grounding = grounding or self._ground(state, read.answer, read.findings, read.computation)
            step["grounding"] = grounding.level
            if check.ok and at_least(grounding.level, self.accept):
                state.rung = step["rung"]
                state.answered(read.findings, grounding, read.derived, read.computation)
                state.log(name, {**step, "succeeded": True})
                return outcome("answer", answer=read.answer, sources=list(range(1, len(read.findings) + 1)))
            if check.ok:
                reason = f"the answer {read.answer[:60]!r} is not grounded ({grounding.level}): {grounding.reason}"
                if state.candidate is None or LEVELS.index(grounding.level) > LEVELS.index(state.candidate[1].level):
                    state.candidate = (read.answer, grounding)
            else:
                reason = "the answer did not verify: " + (
                    f"{', '.join(check.unverified_numbers)} not in the values cited" if check.unverified_numbers
                    else "a cited value is not printed on its page")
        kept = state.keep(read.values if read else [])
        state.fail(state.question, step["strategy"], reason, [h["section"] for h in hits])
        if name == "read":
            state.policy.record(Attempt(state.question, self._read_strategy(state), False,
                                  [(h["node_id"], h["score"]) for h in hits], first_rung=True))
        state.log(name, {**step, "succeeded": False, "reason": reason, "findings": [f.model_dump() for f in kept]})
        return None

    @staticmethod
    def _read_strategy(state: Run) -> Strategy:
        """The ladder's rung a read's search is: hybrid passages, in the question's document or globally."""
        return Strategy("hybrid", "document" if state.doc_id else "global")

    def _ground(self, state: Run, answer: str, findings: list[Finding], computation: str = "") -> Grounding:
        """The answer's grounding on the pages of `findings`; a calculation's operands are its findings' values,
        and the bridges the hops rung read through name what the question asks about. A text value grounded
        in code is confirmed by the model (`programs.confirm`)."""
        values = [n for f in findings if (n := finding_number(f)) is not None] if computation else None
        bridges = list(dict.fromkeys(hit["via"] for hit in state.read_hits if hit.get("via")))
        places = [(f.doc_id, f.page) for f in findings]
        grounding = ground(state.question, answer, values, places, self.corpus, computation, bridges)
        if grounding.level != GROUNDED and (found := self._comparison(state)) is not None:
            grounding = found.grounding() if found.states(answer) else replace(
                grounding, reason=f"{grounding.reason}; compared in code on their own pages: {found.answer} "
                                  f"({'; '.join(found.shown)})")
        return confirmed(self.confirm, state.question, answer, grounding, self.accept)

    def _question_rows(self, state: Run) -> list[dict]:
        """At most READ_ROWS table rows whose label the question names (every word of it), each as a
        passage that names its columns (`programs.row_arithmetic.row_passage`)."""
        return [row_passage(row) for row in named_rows(self.corpus, state.question, state.bucket, state.doc_id)[:READ_ROWS]]

    def _extract(self, state: Run, item: str, strategy: Strategy,
                 open_items: list[str]) -> tuple[bool, list[str], dict | None]:
        """One rung of the ladder for `item`: (whether its findings answer it, the open items they resolve, the
        outcome when a code capability the agent called answered the question, `_computed`)."""
        results, anchors, places = self._search(state, item, strategy)
        computed: list[Computed] = []
        state.rung = strategy.method
        step = {"item": item, "strategy": strategy.describe(), "results": len(anchors)}
        unread = {node for node, _ in anchors} - state.read_ids
        if not anchors and strategy.method != "select":  # nothing to read: an extraction could only make values up
            findings, sections, step["lm_call"] = [], [], False
            reason = results if results.startswith("The search failed") else "the search found nothing"
        elif not unread and strategy.method in REREAD_SKIPPED:
            findings, sections, step["lm_call"] = [], [], False
            reason = "an earlier step read every passage it found"
        else:
            state.read_ids |= unread
            findings, reason, sections, computed = self._extraction(state, item, strategy, results, places, step)
        answered, resolved = False, []
        if findings:
            try:
                judgement = self.evaluate(shopping_item=item, findings=_numbered(findings), open_subqueries=open_items)
            except DSPyError as error:
                judgement, findings, (reason, step["error"]) = None, [], state.error(error, "the evaluation output was malformed")
            if judgement is not None:
                valid = _picked(judgement.valid_findings, findings)
                answered = bool(judgement.answered and valid)
                findings, resolved = valid, [q for q in judgement.resolved_subqueries if q in open_items]
                reason = reason if answered else (judgement.reason or "findings did not answer the item")
        state.keep(findings)  # partial when not answered
        if not answered:
            state.fail(item, strategy.describe(), reason or "no finding answered the item", sections)
        state.policy.record(Attempt(item, strategy, answered, anchors))
        step.update(findings=[f.model_dump() for f in findings], succeeded=answered,
                    reason=None if answered else state.failures[-1].reason)
        state.log("extract", step)
        return answered, resolved, next(filter(None, (self._computed(state, result) for result in computed)), None)

    def _computed(self, state: Run, result: Computed) -> dict | None:
        """A code capability's answer that the agent got (`programs.capabilities`), settled as the table rung's
        is: the outcome when it verifies and grounds on the question (its unit, scale and operation), else None,
        its printed values kept as findings and its failure recorded."""
        if not result.answer:
            return None
        step = {"rung": "table_calculation", "strategy": "table_calculation: a tool the agent called, computed in code",
                "item": result.question, "results": len(result.values), "calculation": result.calculation,
                "answer": result.answer, "lm_call": False}
        return self._settle(state, "tool", step, [], result.read(), result.problem)

    def _extraction(self, state: Run, item: str, strategy: Strategy, results: str, places: list[tuple],
                    step: dict) -> tuple[list[Finding], str, list[str], list[Computed]]:
        """(findings placed on the pages that print them, failure reason, sections searched, the results of the
        code capabilities the agent called) of one Extraction of a rung's `results`; what it did is added to `step`."""
        try:
            extraction = self.extract(question=state.question, shopping_item=item,
                                      section_index=self._section_index(state.doc_id, strategy),
                                      failed_searches=state.tried(), results=results,
                                      max_iters=self.agent_steps if strategy.method == "select" else 0)
        except DSPyError as error:  # LMs see a short reason, the log keeps the error
            reason, step["error"] = state.error(error, "the extraction output was malformed")
            return [], reason, [], []
        placed = [self._placed(f, places) for f in extraction.findings]
        findings = [f for f in placed if f is not None]
        reason, sections = extraction.failure_reason, extraction.sections_searched
        if moved := sum(1 for f, g in zip(extraction.findings, placed) if g is not None and g != f):
            step["moved_to_their_page"] = moved
        if len(findings) < len(extraction.findings):
            step["not_printed"] = len(extraction.findings) - len(findings)
            reason = reason if findings else "the values reported are not printed on the pages cited"
        step["tools"] = [v for k, v in extraction.trajectory.items() if k.startswith("tool_name")]
        return findings, reason, sections, computed_results(extraction.trajectory)

    def _search(self, state: Run, item: str, strategy: Strategy) -> tuple[str, list[tuple[str, float]], list[tuple]]:
        """Run the strategy's own search (before the agent's tool calls): its results formatted, its
        anchors (node, score) and the places (doc_id, page, section) its results are printed on.

        Passages are searched with the item's words; for the question itself the label index is
        searched with the Router's terms. On the first 20 FinanceBench questions the embedded Router's
        terms found an evidence page in the top 4 hybrid passages for .15-.25 of questions against .30
        for the question's words, and among the top 4 labels for .35-.45 against .40."""
        corpus, scope_doc = self.corpus, state.doc_id if strategy.scope == "document" else None
        filtered = strategy.scope == "filtered"  # the Router's bucket and filters; wider scopes drop them
        bucket, filters = (state.bucket or state.routed_bucket, state.filters or None) if filtered else (state.bucket, None)
        query = state.terms if strategy.method == "annotations" and item == state.question and state.terms else item
        try:
            if strategy.method == "neighbors":
                hits = self._anchor_hits(strategy.anchor)
            elif strategy.method == "annotations":
                hits = corpus.annotations_search(query, filters=filters, bucket=bucket,
                                                 top_k=self.top_k, doc_id=scope_doc)
            elif strategy.method == "select":
                return "No search was run: read the section index and fetch the section likely to hold the item.", [], []
            else:
                weight = {"text": 1.0, "semantic": 0.0}.get(strategy.method, self.lexical_weight)
                hits = corpus.search(query, weight, bucket=bucket, filters=filters, top_k=self.top_k,
                                     context_chars=self.context_chars, doc_id=scope_doc)
        except ValueError as error:  # e.g. a filter on a field the bucket does not have
            return f"The search failed: {error}", [], []
        anchors = [(hit.get("node_id") or hit.get("annotation_id"), hit["score"]) for hit in hits]
        places = [(hit["doc_id"], page, hit.get("section", "")) for hit in hits for page in hit.get("pages", [hit["page"]])]
        return _format_hits(hits) or "No results.", anchors, list(dict.fromkeys(places))

    def _anchor_hits(self, node_id: str) -> list[dict]:
        """The anchor's section, read in full (within budget), as one result."""
        parent = next((n for n in self.corpus.neighbors(node_id) if n["relation"] == "parent"), None)
        if parent is None or parent["kind"] != "section":
            return []
        doc_id, _, section_id = parent["node_id"][len("sec:"):].rpartition(":")
        section = self.corpus.fetch_section(doc_id, section_id, max_tokens=SECTION_TOKENS)
        first, last = section["pages"]
        return [{"doc_id": doc_id, "page": first, "pages": list(range(first, last + 1)), "section": section["title"],
                 "text": section["text"], "node_id": node_id, "score": 1.0}]

    def _tools(self) -> list[dspy.Tool]:
        """The extraction agent's tools, each described in one line (descriptions are in every agent prompt)."""
        corpus = self.corpus

        def fetch_section(doc_id: str, section: str) -> str:
            found = corpus.fetch_section(doc_id, section, max_tokens=SECTION_TOKENS)
            return f"{found['title']} (pp. {found['pages'][0]}-{found['pages'][1]})\n{found['text']}"

        def neighbors(node_id: str) -> str:
            return "\n".join(f"{n['relation']}: {n['node_id']} p. {n['page']} {n['title']}"
                             for n in corpus.neighbors(node_id))

        def search_text(query: str, doc_id: str) -> str:
            hits = corpus.search_text(query, top_k=self.top_k, context_chars=self.context_chars, doc_id=doc_id,
                                      hybrid=True)
            return _format_hits(hits) or "No results."

        return [dspy.Tool(fetch_section, desc="Read a section of a document; section is an id (s12) or a title."),
                dspy.Tool(neighbors, desc="The passages and sections next to a node (a result's node, e.g. seg:12)."),
                dspy.Tool(search_text, desc="Search one document for passages."), *capability_tools(corpus)]

    def _section_index(self, doc_id: str | None, strategy: Strategy) -> str:
        """The document's section tree, shown only when the strategy reads sections it must pick: the
        deepest levels (at most three) that fit in MAX_SECTIONS_SHOWN lines."""
        if strategy.method != "select" or doc_id is None:
            return SECTIONS_NOT_SHOWN
        rows = self.corpus.section_index(doc_id)
        for depth in (3, 2, 1):
            shown = [r for r in rows if r["level"] <= depth]
            if len(shown) <= MAX_SECTIONS_SHOWN:
                break
        return "\n".join(f"{r['id']}: {r['title'][:60]} (pp. {r['pages'][0]}-{r['pages'][1]})"
                         for r in shown[:MAX_SECTIONS_SHOWN])

    def _placed(self, finding: Finding, places: list[tuple]) -> Finding | None:
        """The finding if its value is printed on its cited page; else the finding moved to the first
        page of the results it read where its value is printed (a 0.5B model often copies the wrong
        page or doc_id); else None (a computed or guessed value)."""
        text = self.corpus.page_text(finding.doc_id, finding.page)
        if text is not None and value_on_page(finding, text):
            return finding
        for doc_id, page, section in places:
            if value_on_page(finding, self.corpus.page_text(doc_id, page) or ""):
                return finding.model_copy(update={"doc_id": doc_id, "page": page, "section": section or finding.section})
        return None

    def _replan(self, state: Run) -> list[str]:
        try:
            subqueries = self.plan(question=state.question, findings=_numbered(state.findings),
                                   failed_searches=state.tried()).subqueries[:2]
        except DSPyError as error:
            state.log("plan", {"error": state.error(error)[1]})
            return []
        state.log("plan", {"subqueries": subqueries})
        tried = state.tried()  # a 0.5B Planner copies failure lines back as new tasks
        return [q for q in subqueries if _is_item(q) and not any(q.strip() in line for line in tried)]

    def _synthesize(self, state: Run, last_chance: bool) -> dict:
        try:
            out = self.synthesize(question=state.question, findings=_numbered(state.findings),
                                  failed_searches=state.tried(), last_chance=last_chance)
            synthesis = {key: out[key] for key in ("status", "answer", "sources", "confidence", "need",
                                                   "need_reason", "clarification")}
        except DSPyError as error:
            synthesis = outcome("needs", reason=f"synthesis failed: {state.error(error)[1]}")
        state.log("synthesize", {"last_chance": last_chance, **synthesis})
        return synthesis

    def _nothing_found(self, state: Run) -> dict:
        """The outcome when no finding was ever kept, decided in code: Synthesis reads only
        findings, so it could not answer. A list or aggregate question whose rows were not found even
        with its filters widened asks the user instead, saying what was tried."""
        tried = state.tried()
        if state.table_attempts:
            synthesis = nothing_matched(state.table_attempts, tried)
        else:
            synthesis = outcome("fail", reason="Nothing found. " + "; ".join(tried) if tried else "no strategy left to try")
        state.log("synthesize", {"decided_in_code": True, **synthesis})
        return synthesis

    def _rerank(self, state: Run) -> list[Finding]:
        """The findings in the Rerank's order, when it can change the evidence's top `read_k` pages (module
        docstring); else as they were found. Rows a structured query selected keep its order."""
        findings = state.findings[:MAX_EVIDENCE]
        read = {(hit["doc_id"], hit["page"]) for hit in state.read_hits}
        if state.rows or len(read) >= self.read_k or len({(f.doc_id, f.page) for f in findings} - read) < 2:
            return findings
        try:
            ranking = self.rerank(question=state.question, evidence=_numbered(findings)).ranking
        except DSPyError as error:
            state.log("rerank", {"error": state.error(error)[1]})
            return findings
        ranked = _picked(ranking, findings)
        return ranked + [f for f in findings if f not in ranked]

    def _result(self, state: Run, synthesis: dict) -> dspy.Prediction:
        """The outcome with its citations verified. The ranked evidence starts with the first rung's
        passages (so it never ranks worse than the one-call search), then the findings, reranked when
        the loop gathered them (and no LM call failed)."""
        laddered = not state.lm_error and state.rung not in READ_RUNGS
        findings = self._rerank(state) if laddered else state.findings[:MAX_EVIDENCE]
        evidence = [{"doc_id": h["doc_id"], "page": h["page"], "section": h["section"], "label": ""}
                    for h in state.read_hits]
        evidence += [{"doc_id": f.doc_id, "page": f.page, "section": f.section, "label": f.label} for f in findings]
        status = synthesis["status"]
        answer, sources = (synthesis["answer"], [n - 1 for n in synthesis["sources"]]) if status == "answer" else ("", [])
        check = verify(answer, sources, state.findings, self.corpus.page_text, self.corpus.file_of, state.derived)
        if status != "answer":
            answer, grounding = state.candidate or ("", Grounding(UNSUPPORTED))
        elif state.rung == "structured":  # rows whose labels the question names, computed in code
            grounding = Grounding(GROUNDED, shown=list(dict.fromkeys(f"{row['label']} · p.{row['page']}" for row in state.rows))[:3],
                                  pages={(row["doc_id"], row["page"]): GROUNDED for row in state.rows})
        else:
            cited = [state.findings[i] for i in sources if 0 <= i < len(state.findings)]
            grounding = state.grounding or self._ground(state, answer, cited, state.computation)
        citation_levels(check.citations, grounding)
        status, answer, reason, candidate = settle(status, answer, synthesis["need_reason"], grounding, self.accept)
        if synthesis["status"] != "answer" and answer:  # the read's unconfirmed answer, when the loop found none
            answer, candidate = "", answer
            reason = "; ".join(filter(None, (f"unconfirmed ({grounding.level}): {grounding.reason}", reason)))
        return dspy.Prediction(
            status=status, answer=answer, candidate=candidate, grounding=grounding.level if answer or candidate else "",
            grounding_reason=grounding.reason, grounded_values=grounding.shown,
            confidence=synthesis["confidence"], need=synthesis["need"], reason=reason,
            clarification=synthesis["clarification"],
            citations=[c.model_dump() for c in check.citations],
            citations_verified=check.ok, unverified_numbers=check.unverified_numbers,
            findings=[f.model_dump() for f in state.findings],
            failed_searches=[f.model_dump() for f in state.failures],
            evidence=evidence, computation=state.computation if status == "answer" else "",
            iterations=sum(1 for step in state.trajectory if step["step"] in ("read", "extract")),
            answered_by=state.rung if status == "answer" else "",
            trajectory=state.trajectory, rows=state.rows,
        )


def _is_item(text: str) -> bool:
    return bool(text.strip()) and len(text) <= MAX_ITEM_CHARS


def _format_hits(hits: list[dict]) -> str:
    lines = []
    for number, hit in enumerate(hits, start=1):
        head = (f"[{number}] doc_id={hit['doc_id']} page={hit['page']} section={hit.get('section', '')!r} "
                f"node={hit.get('node_id') or hit.get('annotation_id')}")
        if "label" in hit:
            fields = "; ".join(f"{k}: {v}" for k, v in hit["fields"].items())
            lines.append(f"{head}\n{hit['label']}: {hit['value_text']}" + (f" ({fields})" if fields else ""))
        else:
            lines.append(f"{head}\n{hit['text']}")
    return "\n\n".join(lines)


def numbered_passages(hits: list[dict], doc_id: str | None) -> list[str]:
    """Passages as the read is shown them, numbered from [1]; inside one document (`doc_id`) without its id,
    which is noise there (a TAT-QA uuid's digits were copied as a value)."""
    return [f"[{n}] {'' if doc_id else h['doc_id'] + ' '}page {h['page']} ({h['section']}): {h['text']}"
            for n, h in enumerate(hits, 1)]


def _numbered(findings: list[Finding]) -> list[str]:
    """Findings as the LM steps read them: one line each, numbered from [1] (a 0.5B model counts from 1
    whatever it is told), the numbers they answer with."""
    return [f"[{n}] {f.label}: {f.value}{f' {f.unit}' if f.unit else ''} ({f.doc_id} p. {f.page}) \"{f.context}\""
            for n, f in enumerate(findings, start=1)]


def _picked(numbers: list[int], findings: list[Finding]) -> list[Finding]:
    """The findings an LM picked by their [numbers], in its order, each once; unknown numbers are ignored."""
    return [findings[n - 1] for n in dict.fromkeys(numbers) if 1 <= n <= len(findings)]
