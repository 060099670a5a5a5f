"""A conversation around a program: each turn is read against a rolling summary and the last result.

    chat = Conversation("runs/index")            # iterative by default; any program name or module
    chat.turn("What was Northwind's net income for 2023?")
    chat.turn("and its total assets?")           # → "What were Northwind's total assets in 2023?"

turn → a command on the last result's rows, decided in code ("show the rest", "export ... [FILE.csv]")
     → or RewriteTurn (typed): a standalone question, whether it starts a new topic, and its scope
       (document, bucket, years, names), read against the summary, the last question and its outcome;
       after a `clarify` result the turn is the reply, merged into the pending question, and the
       program sees the searches that already failed for it. With the small-model repairs
       (`programs.repairs`) the rewrite is checked in code (`keeps_turn`); one that drops what the turn
       adds, still refers back, or repeats the last question is replaced by the code's own resolution
       (`resolve`), as is an empty or malformed rewrite in any case
     → the program answers the standalone question within the scope
     → UpdateSummary (typed) folds the question and its outcome into the summary, clipped in code to
       SUMMARY_CHARS (about 350 tokens).
The first turn of a topic is its own question: no rewrite call is made. `forward` is pure (state in,
state out), so the conversation can be evaluated and compiled like the other programs; `turn` keeps
the state and, with a session, stores every turn in SQLite beside the index (`programs.sessions`).
"""
from __future__ import annotations

import inspect
import re
from itertools import dropwhile as _dropwhile
from pathlib import Path

import dspy
from dspy.utils.exceptions import DSPyError
from pydantic import BaseModel, Field

from ferret.corpus.numbers import YEAR
from ferret.corpus.tools import Corpus
from ferret.programs.repairs import repairs_on, step_lm
from ferret.programs.result import as_json, error_text, measured
from ferret.programs.sessions import SessionStore
from ferret.programs.structured import export_rows
from ferret.signatures import RewriteTurn, UpdateSummary
from ferret.signatures.types import TurnScope

SUMMARY_CHARS = 1400  # about 350 tokens
ROWS_SHOWN = 10  # rows a "show the rest" turn adds
_SHOW_MORE = re.compile(r"^\W*(?:(?:please\s+)?(?:show|list|give|see|print)\b.*\b(?:rest|more|remaining|others|next|all)\b"
                        r"|(?:more|next|the rest)\W*$)", re.IGNORECASE)
_EXPORT = re.compile(r"\bexport\b|\bsave\b.*\bcsv\b", re.IGNORECASE)
_CSV_PATH = re.compile(r"(\S+\.csv)\b", re.IGNORECASE)
_SAYS_NEW = re.compile(r"\b(?:new (?:question|topic)|different (?:question|topic)|another topic|unrelated)\b", re.I)
_REFERS_BACK = re.compile(r"^\W*(?:and|what about|how about)\b|\b(?:it|its|they|their|them|then|that year|that date|"
                          r"the same|those|these)\b", re.IGNORECASE)
_PRONOUN = re.compile(r"\b(?:it|its|they|their|them|that|this|those|these)\b", re.IGNORECASE)
# A name: a capitalized word or run of them ("Redline Tire & Wheel"), or an id with capitals and digits ("SP-410")
_NAME = re.compile(r"\b[A-Z][\w'-]*(?:\s+(?:&\s+)?[A-Z][\w'-]*)*")
_QUESTION_WORDS = {"What", "How", "Which", "When", "Where", "Who", "Why", "Does", "Did", "Is", "Are", "Was", "Were",
                   "And", "In", "Under", "The", "Of", "For"}
_WORD = re.compile(r"[A-Za-z][\w-]{3,}|\d[\w.,-]*")
_STOP = {"what", "about", "which", "that", "this", "those", "these", "then", "their", "there", "with", "from", "have",
         "does", "were", "much", "many", "year", "date", "same", "also", "please", "show", "tell", "give"}


class ChatState(BaseModel):
    """What the next turn is read against."""

    summary: str = ""
    last_question: str = ""
    last_outcome: str = ""
    pending: bool = False  # the last result asked the user to clarify
    tried: list[dict] = Field(default_factory=list)  # the pending question's failed searches
    scope: TurnScope = Field(default_factory=TurnScope)
    rows: list[dict] = Field(default_factory=list)  # the last structured result's rows
    shown: int = 0  # of which this many were shown


class Conversation(dspy.Module):
    """Answer each turn of a conversation with `program` (a name or a module) over `corpus`.

    `session` (an id, or True for a new one) stores the turns in the index's sessions.db, so that a
    later Conversation with the same id resumes where it left off."""

    def __init__(self, corpus: Corpus | str | Path, program: str | dspy.Module = "iterative",
                 session: str | bool | None = None, max_iterations: int | None = None, export_dir: str | Path = ".",
                 repairs: bool | None = None):
        """`repairs`: the small-model repairs of the rewrite and of a named program (`programs.repairs`);
        None decides by the LM."""
        super().__init__()
        from ferret.programs import make_program

        self.corpus = corpus if isinstance(corpus, Corpus) else Corpus(corpus)
        self.repairs = repairs
        self.program = make_program(program, self.corpus, max_iterations, repairs=repairs) \
            if isinstance(program, str) else program
        self.rewrite = dspy.Predict(RewriteTurn)
        self.summarize = dspy.Predict(UpdateSummary)
        self.export_dir = Path(export_dir)
        self.state = ChatState()
        # the session's turns (not `history`: dspy.Module keeps its LM calls there)
        self.store, self.session, self.turns_so_far = None, None, []
        if session:
            self.store = SessionStore(self.corpus.store.dir)
            name = program if isinstance(program, str) else type(program).__name__
            self.session = self.store.create(name) if session is True else session
            self.store.check(self.session)
            self.turns_so_far = self.store.turns(self.session)
            if self.turns_so_far:
                self.state = ChatState.model_validate(self.turns_so_far[-1]["state"])

    # --- one turn -------------------------------------------------------------------------------
    def turn(self, text: str) -> dspy.Prediction:
        """Answer `text` as the conversation's next turn; the state moves on (and is stored)."""
        prediction = self(turn=text, state=self.state)
        self.state, prediction.text, prediction.n = prediction.state, text, len(self.turns_so_far) + 1
        record = {"n": prediction.n, "text": text, "kind": prediction.kind, "question": prediction.question,
                  "state": self.state.model_dump(), "result": _stored(prediction)}
        if self.store is not None:
            self.store.add_turn(self.session, record)
        self.turns_so_far.append(record)  # the same records `SessionStore.turns` reads back
        return prediction

    def new_topic(self) -> None:
        """Forget the summary, scope and last result (the chat's /new)."""
        self.state = ChatState()

    def forward(self, turn: str, state: ChatState | None = None) -> dspy.Prediction:
        """The turn's reading (kind, standalone question, scope), its result and the state after it,
        with the LM calls, tokens and seconds of the whole turn (rewrite and summary included)."""
        return measured(lambda: self._turn(turn, state or ChatState()))

    def _turn(self, turn: str, state: ChatState) -> dspy.Prediction:
        if state.rows and _SHOW_MORE.search(turn):
            return self._show_more(turn, state)
        if state.rows and _EXPORT.search(turn):
            return self._export(turn, state)
        return self._ask(turn, state)

    # --- questions ------------------------------------------------------------------------------
    def _ask(self, turn: str, state: ChatState) -> dspy.Prediction:
        question, new_topic, scope, rewrite_error = turn, True, TurnScope(), ""
        if state.last_question:
            read = None
            try:
                read = self.rewrite(summary=state.summary, last_question=state.last_question,
                                    last_outcome=state.last_outcome, turn=turn)
            except DSPyError as error:  # a malformed rewrite: resolved in code below
                rewrite_error = error_text(error)
            repair = repairs_on(self.repairs, step_lm(self.rewrite))
            new_topic = is_new_topic(turn, bool(read and read.new_topic), repair) and not state.pending
            if not new_topic:
                written = (read.question if read else "").strip()
                kept = (keeps_turn(written, turn, state.last_question)  # a reply keeps the pending question too
                        and (not state.pending or keeps_turn(written, state.last_question, ""))) if repair else bool(written)
                question = written if kept else resolve(turn, state)
                scope = _carried(state.scope, read.scope if read else TurnScope())
            elif read is not None:
                scope = read.scope
        scope = self._known(scope)
        tried = state.tried if state.pending and not new_topic else []
        result = self.program(question=question, doc_id=scope.doc_id or None, bucket=scope.bucket or None,
                              **({"tried": tried} if tried and _takes_tried(self.program) else {}))
        outcome = _outcome(result)
        summary = "" if new_topic else state.summary
        try:
            summary = self.summarize(summary=summary, question=question, outcome=outcome).new_summary
        except DSPyError:  # a malformed summary: keep the last one and add this exchange
            summary = f"{summary} Q: {question} A: {outcome}".strip()
        rows = list(result.get("rows") or [])
        after = ChatState(summary=_clip(summary), last_question=question, last_outcome=outcome,
                          pending=result.status == "clarify", tried=list(result.get("failed_searches") or []),
                          scope=scope, rows=rows, shown=min(len(rows), ROWS_SHOWN))
        return dspy.Prediction(kind="question", question=question, new_topic=new_topic, scope=scope.model_dump(),
                               result=result, rows=rows[:ROWS_SHOWN], state=after, rewrite_error=rewrite_error)

    def _known(self, scope: TurnScope) -> TurnScope:
        """The scope without a document or bucket the corpus lacks (a misread name is not an error)."""
        known = {}
        for field, value in (("doc_id", scope.doc_id), ("bucket", scope.bucket)):
            try:
                self.corpus.check_scope(**{field: value or None})
                known[field] = value
            except ValueError:
                known[field] = ""
        return scope.model_copy(update=known)

    # --- commands on the last result ------------------------------------------------------------
    def _show_more(self, turn: str, state: ChatState) -> dspy.Prediction:
        rows = state.rows[state.shown:state.shown + ROWS_SHOWN]
        after = state.model_copy(update={"shown": state.shown + len(rows)})
        return self._command("show_more", turn, state, after, rows=rows,
                             answer=f"rows {state.shown + 1}-{after.shown} of {len(state.rows)}" if rows
                             else f"all {len(state.rows)} rows were shown")

    def _export(self, turn: str, state: ChatState) -> dspy.Prediction:
        named = _CSV_PATH.search(turn)
        path = Path(named.group(1)) if named else self.export_dir / f"ferret-{self.session or 'chat'}-rows.csv"
        written = export_rows({"rows": state.rows}, path)
        return self._command("export", turn, state, state, path=str(written["path"]),
                             answer=f"{written['rows']} rows written to {written['path']}")

    def _command(self, kind: str, turn: str, state: ChatState, after: ChatState, answer: str, rows=(), path=""):
        result = dspy.Prediction(status="answer", answer=answer, citations=[], citations_verified=False, evidence=[],
                                 rows=list(rows))
        return dspy.Prediction(kind=kind, question=state.last_question, new_topic=False,
                               scope=state.scope.model_dump(), result=result, rows=list(rows), state=after,
                               path=path, rewrite_error="")


def is_new_topic(turn: str, read_as_new: bool, repair: bool = True) -> bool:
    """A turn that says so ("New question: ...") starts a new topic; else the rewrite decides, except that
    with the small-model repair (`repair`) one that refers back ("its", "that year", "And ...?") does not,
    whatever the rewrite said (the embedded model calls most follow-ups new)."""
    if _SAYS_NEW.search(turn):
        return True
    return read_as_new and not (repair and _REFERS_BACK.search(turn))


def keeps_turn(question: str, turn: str, last_question: str) -> bool:
    """Whether a rewritten question stands alone and keeps what the turn adds: every content word of the
    turn, nothing left that refers back ("it", "that year", "And ...?"), and it is not the last question
    again. The embedded model often copies the last question or the summary, or returns the turn as is."""
    words = {word.lower() for word in _WORD.findall(turn)} - _STOP
    said = question.lower()
    return (bool(question) and question.strip() != last_question.strip() and not _REFERS_BACK.search(question)
            and all(word in said for word in words))


def resolve(turn: str, state: ChatState) -> str:
    """The turn made standalone in code: a reply to a clarification is added to the pending question;
    otherwise the last question's years (when the turn names none) and, when the turn says "it", "its",
    "they"..., its names are added in parentheses."""
    last = state.last_question
    if state.pending:
        return f"{last.rstrip(' ?.')} ({turn.strip()})"
    context = [] if YEAR.search(turn) else YEAR.findall(last)
    if _PRONOUN.search(turn):
        names = (" ".join(_dropwhile(_QUESTION_WORDS.__contains__, name.split())).removesuffix("'s")
                 for name in _NAME.findall(last))
        context += [name for name in names if name and name.lower() not in turn.lower()]
    context = list(dict.fromkeys(context))
    return f"{turn.strip()} ({', '.join(context)})" if context else turn


def _carried(last: TurnScope, read: TurnScope) -> TurnScope:
    """A follow-up keeps what its own scope leaves empty."""
    return TurnScope(doc_id=read.doc_id or last.doc_id, bucket=read.bucket or last.bucket,
                     years=read.years or last.years, names=read.names or last.names)


def _takes_tried(program: dspy.Module) -> bool:
    return "tried" in inspect.signature(program.forward).parameters


def _outcome(result: dspy.Prediction) -> str:
    if result.status == "clarify":
        return f"asked the user: {result.get('clarification') or ''}"
    return f"{result.status}: {result.get('answer') or result.get('reason') or ''}"


def _clip(summary: str) -> str:
    """The summary within SUMMARY_CHARS: its last sentences that fit."""
    summary = " ".join(summary.split())
    if len(summary) <= SUMMARY_CHARS:
        return summary
    tail = summary[-SUMMARY_CHARS:]
    return tail[tail.find(". ") + 2:] if ". " in tail else tail


def _stored(prediction: dspy.Prediction) -> dict:
    result = prediction.result
    return {**{key: value for key, value in as_json(result).items() if value is not None},
            "scope": prediction.scope, "path": prediction.get("path", "")}
