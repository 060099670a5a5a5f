"""`ferret ask | chat | export`: answer questions with page citations, and write what an answer read."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ferret.cli.arguments import DEFAULT_INDEX, accept_option, iterations_option, long_text_option, program_options, words
from ferret.programs.display import citation_mark, grounding_lines


def add_commands(commands) -> None:
    ask = commands.add_parser("ask", help="answer a question with page citations")
    ask.add_argument("question", type=words)
    ask.add_argument("--index", default=DEFAULT_INDEX)
    program_options(ask)
    ask.add_argument("--compiled", help="a compiled program's JSON state to load")
    iterations_option(ask)
    long_text_option(ask)
    ask.add_argument("--doc", help="the document the question is about")
    ask.add_argument("--bucket")
    ask.add_argument("--json", action="store_true", help="print the result as one JSON object")
    accept_option(ask)
    ask.set_defaults(run=_ask)

    chat = commands.add_parser("chat", help="a conversation: follow-ups, clarifications answered, sessions that persist")
    chat.add_argument("--index", default=DEFAULT_INDEX)
    program_options(chat)
    chat.add_argument("--compiled", help="a compiled program's JSON state to load (its prompts and settings)")
    iterations_option(chat)
    chat.add_argument("--session", help="resume this session (ids: ferret chat --list)")
    chat.add_argument("--list", action="store_true", help="list the index's sessions")
    chat.add_argument("--no-track", action="store_true", help="do not log the session in MLflow")
    chat.set_defaults(run=_chat)

    export = commands.add_parser("export", help="write every row a structured answer read to a CSV file")
    export.add_argument("result", help="LAST (the last `ferret ask`) or a result JSON file written by `ask --json`")
    export.add_argument("--csv", required=True, help="the CSV file to write")
    export.set_defaults(run=_export)


def last_result() -> Path:
    """Where `ferret ask` keeps its last result, for `ferret export LAST`."""
    from ferret.paths import runs_dir

    return runs_dir() / "results" / "last.json"


def _ask(args) -> int:
    from ferret.corpus.tools import Corpus
    from ferret.programs import load_compiled, make_program
    from ferret.programs.lm import answering, make_lm
    from ferret.programs.result import as_json, check_input

    corpus = Corpus(args.index)
    check_input(corpus, args.question, args.doc, args.bucket)  # before the LM and the compiled state load
    program = make_program(args.program, corpus, args.max_iterations, args.accept, args.repairs, args.long_text)
    if args.compiled:
        load_compiled(program, args.compiled, max_iterations=args.max_iterations, repairs=args.repairs,
                      long_text=args.long_text)
    if not args.json and args.program == "iterative":
        program.on_step = _print_step
    with answering(make_lm(args.lm)):
        result = program(question=args.question, doc_id=args.doc, bucket=args.bucket)
    record = json.dumps(as_json(result), ensure_ascii=False, default=str)
    last_result().parent.mkdir(parents=True, exist_ok=True)
    last_result().write_text(record, encoding="utf-8")
    if args.json:
        print(record)
        return 0
    print_result(result)
    return 0


def _chat(args) -> int:
    from ferret.corpus.tools import Corpus
    from ferret.cli.chat import chat, list_sessions
    from ferret.programs import load_compiled
    from ferret.programs.conversation import Conversation
    from ferret.programs.lm import answering, make_lm
    from ferret.programs.sessions import SessionStore

    corpus = Corpus(args.index)
    store = SessionStore(corpus.store.dir)
    if args.list:
        list_sessions(store)
        return 0
    if args.session:
        store.check(args.session)  # before the model loads
    conversation = Conversation(corpus, args.program, session=args.session or True, max_iterations=args.max_iterations,
                                repairs=args.repairs)
    if args.compiled:
        load_compiled(conversation.program, args.compiled, max_iterations=args.max_iterations, repairs=args.repairs)
    with answering(make_lm(args.lm)):
        chat(conversation, track=not args.no_track)
    return 0


def print_result(result) -> None:
    said = {"answer": result.answer, "clarify": result.clarification}.get(result.status)
    print(f"{result.status.upper()}: {said or result.reason}")
    if result.status == "needs" and result.get("need"):
        print(f"  still needs: {result.need}")
    for line in grounding_lines(result):
        print(f"  {line}")
    if result.get("computation"):
        print(f"  computed in code: {result.computation}")
    for citation in result.citations:
        print(f"  [{citation['file']} p.{citation['page']}] {citation['section']} ({citation_mark(citation)})")
    if result.unverified_numbers:
        print(f"  numbers not found in the evidence: {', '.join(result.unverified_numbers)}")
    print(f"  {result.iterations} iterations{f' (answered by {result.answered_by})' if result.get('answered_by') else ''}, "
          f"{result.lm_calls} LM calls, "
          f"{result.tokens['input']}+{result.tokens['output']} tokens, {result.seconds}s")


def _export(args) -> int:
    from ferret.programs.structured import export_rows

    source = last_result() if args.result == "LAST" else Path(args.result)
    if not source.exists():
        raise FileNotFoundError(f"{source} not found" + (" (no `ferret ask` yet)" if args.result == "LAST" else ""))
    try:
        result = json.loads(source.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{source} is not a result JSON ({error})") from None
    written = export_rows(result, args.csv)
    print(f"{written['rows']} rows written to {written['path']}")
    return 0


def _print_step(step: dict) -> None:
    detail = {"route": lambda s: s.get("route", s.get("error", "")),
              "read": lambda s: f"{s['strategy']} → {'answered' if s['succeeded'] else 'failed: ' + str(s['reason'])}",
              "comparison": lambda s: f"{'; '.join(s['values'])}: {s['answer']} → {'answered' if s['succeeded'] else 'failed: ' + str(s['reason'])}",
              "table": lambda s: f"{s['calculation']} → {'answered' if s['succeeded'] else 'failed: ' + str(s['reason'])}",
              "hops": lambda s: f"{s['why']}; bridges {', '.join(s['bridges']) or 'none'}" + (f"; parts {', '.join(s['parts'])}" if s["parts"] else "")
              + (f" ({s['skipped']})" if s.get("skipped") else ""),
              "extract": lambda s: f"{s['strategy']} → {'found' if s['succeeded'] else 'failed: ' + str(s['reason'])}",
              "synthesize": lambda s: s["status"]}.get(step["step"], lambda s: "")
    print(f"· {step['step']}: {detail(step)}", file=sys.stderr, flush=True)
