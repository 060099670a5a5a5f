"""`ferret chat`: a conversation in the terminal, one MLflow run per session.

Each answer is printed with its [N] citations under it (file, page, section, verified or not); while
the program runs, a progress line names its steps. Commands: /new (a new topic), /sources (the last
answer's citations with their quotes), /export FILE (the last rows as CSV), /help, /quit. The session
id is printed first: `ferret chat --session ID` resumes it, `ferret chat --list` lists them.
"""
from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ferret.programs.conversation import Conversation
from ferret.programs.display import citation_mark, grounding_lines

HELP = "/new starts a new topic · /sources shows the last answer's sources · /export FILE writes its rows · /quit"


def list_sessions(store) -> None:
    import datetime

    sessions = store.sessions()
    for session in sessions:
        when = datetime.datetime.fromtimestamp(session["created"]).strftime("%Y-%m-%d %H:%M")
        print(f"{session['id']}  {when}  {session['program']:<9} {session['turns']:>3} turns  {session['first'][:70]}")
    if not sessions:
        print(f"no sessions in {store.path}")


def chat(conversation: Conversation, read: Callable[[str], str] | None = None, track: bool = True) -> None:
    """Read turns (from `read`, default `input`) until /quit or end of input; answer each with `conversation`."""
    read = read or input
    print(f"session {conversation.session} (resume: ferret chat --session {conversation.session}) · {HELP}")
    for turn in conversation.turns_so_far:
        print(f"  {turn['n']}. {turn['text']}")
    with _session_run(conversation, track) as log_turn:
        last = None
        while True:
            try:
                text = read("you> ").strip()
            except (EOFError, KeyboardInterrupt):
                print()
                return
            if text in ("/quit", "/exit"):
                return
            if text in ("", "/help"):
                print(HELP)
            elif text == "/new":
                conversation.new_topic()
                print("new topic: the summary and scope are cleared")
            elif text == "/sources":
                _print_sources(last)
            elif text.startswith("/export"):
                _export(conversation, text.removeprefix("/export").strip())
            elif text.startswith("/"):
                print(f"unknown command {text.split()[0]}; {HELP}")
            else:
                try:
                    last = _answer(conversation, text)
                except ValueError as error:  # a turn the program refuses (too long, ...): say so, go on
                    print(f"\r\033[Kferret: error: {error}")
                    continue
                log_turn(last)


def _answer(conversation: Conversation, text: str):
    program = conversation.program
    if hasattr(program, "on_step"):
        program.on_step = _progress
    turn = conversation.turn(text)
    print("\r\033[K", end="", file=sys.stderr, flush=True)
    result = turn.result
    if turn.kind == "question" and turn.question != text:
        print(f"  (read as: {turn.question})")
    print(f"ferret> {result.answer or result.get('clarification') or result.get('reason') or result.status}")
    for row in turn.rows:
        values = ", ".join(f"{key} {value}" for key, value in (row.get("fields") or {}).items())
        print(f"  - {row['doc_id']} p.{row['page']}: {row['label']}" + (f" ({values})" if values else ""))
    if len(turn.state.rows) > turn.state.shown and turn.kind in ("question", "show_more"):
        print(f"  ({len(turn.state.rows) - turn.state.shown} more rows: say 'show the rest', or /export FILE)")
    for line in grounding_lines(result):
        print(f"  {line}")
    for number, citation in enumerate(result.get("citations") or [], start=1):
        print(f"  [{number}] {citation['file']} p.{citation['page']} · {citation['section'] or '-'} ({citation_mark(citation)})")
    return turn


def _progress(step: dict) -> None:
    print(f"\r\033[K  … {step['step']}", end="", file=sys.stderr, flush=True)


def _print_sources(turn) -> None:
    citations = (turn.result.get("citations") or []) if turn is not None else []
    if not citations:
        print("the last answer cites no sources")
    for number, citation in enumerate(citations, start=1):
        print(f"[{number}] {citation['doc_id']} · {citation['file']} p.{citation['page']} · {citation['section'] or '-'}"
              f"\n    \"{' '.join(citation['quote'].split())}\"")


def _export(conversation: Conversation, path: str) -> None:
    if not path:
        print("usage: /export FILE.csv")
    elif not conversation.state.rows:
        print("the last answer has no rows to export (lists and totals read from tables do)")
    else:
        path = path if path.lower().endswith(".csv") else f"{path}.csv"
        print(f"ferret> {conversation.turn(f'export {path}').result.answer}")


@contextmanager
def _session_run(conversation: Conversation, track: bool) -> Iterator[Callable]:
    """One MLflow run per session (experiment "chat"), resumed with the session; each turn's outcome
    is logged at its step and DSPy's autolog traces its LM calls."""
    if not track:
        yield lambda turn: None
        return
    import mlflow

    from ferret.optimizers.tracking import use_experiment

    use_experiment("chat")
    mlflow.dspy.autolog(silent=True)
    run_id = conversation.store.run_of(conversation.session) or None
    with mlflow.start_run(run_id=run_id, run_name=f"chat-{conversation.session}") as run:
        if run_id is None:
            conversation.store.set_run(conversation.session, run.info.run_id)
            mlflow.log_params({"session": conversation.session, "program": type(conversation.program).__name__,
                               "index": str(conversation.corpus.store.dir)})

        def log_turn(turn) -> None:
            result = turn.result
            mlflow.log_metrics({"answered": float(result.status == "answer"),
                                "citations_verified": float(bool(result.get("citations_verified"))),
                                "lm_calls": float(result.get("lm_calls") or 0),
                                "seconds": float(result.get("seconds") or 0)}, step=turn.n)
            mlflow.log_dict({"turn": turn.n, "text": turn.text, "kind": turn.kind,
                             "question": turn.question, "status": result.status, "answer": result.answer,
                             "citations": result.get("citations") or []}, f"turns/{turn.n:03d}.json")

        yield log_turn
