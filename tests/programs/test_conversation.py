"""The conversation with the scripted LM: follow-ups rewritten against the summary, new topics reset
it, a clarification answered continues the pending question, commands act on the last rows, and
sessions persist in SQLite beside the index, each seeing only its own turns."""
from __future__ import annotations

import csv
import json

import dspy
import mlflow
import pytest

import ferret.optimizers.evaluate
import ferret.programs.conversation
from ferret.optimizers.datasets import load_dataset, split
from ferret.optimizers.metrics import rewrite_correct, turn_correct
from ferret.optimizers.tracking import tracking_uri
from ferret.cli import main
from ferret.programs.conversation import SUMMARY_CHARS, ChatState, Conversation, is_new_topic, keeps_turn, resolve
from ferret.programs.iterative import IterativeRetriever
from ferret.paths import SAMPLE
from ferret.programs.sessions import SessionStore
from tests.fakes import scripted_lm

REVENUE = "What was total revenue in 2023?"
READ_REVENUE = {"calculation": {"expression": ""}, "answer": "3,650", "sources": [1], "missing": ""}
LIST_TIRES = {"decision": {"intent": "list", "route": "structured", "buckets": ["invoices"], "topic_terms": ["tires"]}}


def calls(engine, step):
    return [inputs for name, inputs in engine.calls if name == step]


@pytest.fixture
def chat(small_corpus):
    """A conversation over the small corpus with a scripted LM named as an embedded model (so the
    small-model repairs are on, as with the embedded model); `script` entries are set per test."""
    lm, engine = scripted_lm({"read": READ_REVENUE}, model="local/scripted")
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        yield Conversation(small_corpus), engine


def test_the_first_turn_is_its_own_question_and_starts_the_summary(chat):
    conversation, engine = chat
    turn = conversation.turn(REVENUE)
    assert turn.kind == "question" and turn.question == REVENUE and turn.new_topic
    assert turn.result.status == "answer" and "3,650" in turn.result.answer and turn.result.citations_verified
    assert "rewrite" not in engine.steps()  # nothing to resolve yet: no LM call
    (summarized,) = calls(engine, "summarize")
    assert summarized["question"] == REVENUE and summarized["outcome"].startswith("answer: ")
    assert conversation.state.summary == REVENUE and conversation.state.last_question == REVENUE


def test_a_follow_up_is_rewritten_against_the_summary_and_keeps_the_scope(chat):
    conversation, engine = chat
    engine.script["rewrite"] = [{"new_topic": False, "question": REVENUE, "scope": {"doc_id": "report", "years": [2023]}},
                                {"new_topic": False, "question": "What was total revenue in 2022?", "scope": {"years": [2022]}}]
    conversation.turn("What was total revenue?")
    conversation.turn("and in 2023?")
    turn = conversation.turn("and in 2022?")
    rewrites = calls(engine, "rewrite")
    assert [r["turn"] for r in rewrites] == ["and in 2023?", "and in 2022?"]
    assert rewrites[1]["last_question"] == REVENUE and REVENUE in rewrites[1]["summary"]
    assert turn.question == "What was total revenue in 2022?"
    assert turn.scope == {"doc_id": "report", "bucket": "", "years": [2022], "names": []}  # the document carried
    assert turn.result.answered_by == "table" and turn.result.answer == "3,150"  # one year's cell, read in code
    assert {hit["doc_id"] for hit in turn.result.evidence} == {"report"}


def test_a_new_topic_resets_the_summary_and_the_scope(chat):
    conversation, engine = chat
    engine.script["rewrite"] = [{"new_topic": False, "question": REVENUE, "scope": {"doc_id": "report"}},
                                {"new_topic": True, "question": "How much did the valve caps cost?", "scope": {}}]
    conversation.turn("What was total revenue?")
    conversation.turn("in 2023?")
    turn = conversation.turn("How much did the valve caps cost?")
    assert turn.new_topic and turn.scope["doc_id"] == ""
    assert calls(engine, "summarize")[-1]["summary"] == ""  # the old topic is not carried into the new summary
    assert conversation.state.summary == "How much did the valve caps cost?"


def test_a_misread_document_or_bucket_is_dropped_not_raised(chat):
    conversation, engine = chat
    engine.script["rewrite"] = [{"new_topic": False, "question": REVENUE, "scope": {"doc_id": "annual-report", "bucket": "x"}}]
    conversation.turn("What was total revenue?")
    turn = conversation.turn("in 2023?")
    assert turn.result.status == "answer" and turn.scope["doc_id"] == "" and turn.scope["bucket"] == ""


def test_the_summary_stays_within_its_budget(chat):
    conversation, engine = chat
    engine.script["summarize"] = [{"new_summary": "Revenue was asked about. " * 200}]
    conversation.turn(REVENUE)
    assert 0 < len(conversation.state.summary) <= SUMMARY_CHARS
    assert conversation.state.summary.startswith("Revenue was asked about.")


def test_a_clarification_answered_continues_the_pending_question_with_what_failed(small_corpus):
    """The first turn ends in `clarify`; the reply is merged into the pending question, never read as a
    new topic, and the program is given the searches that failed for it."""
    failure = {"item": REVENUE, "strategy": "read: hybrid search for passages", "reason": "two years are printed"}
    clarify = {"status": "clarify", "answer": "", "sources": [], "confidence": 0.2, "need": "", "need_reason": "",
               "clarification": "Which year: 2023 or 2022?"}
    lm, engine = scripted_lm({"read": READ_REVENUE,
                              "rewrite": {"new_topic": True, "question": "2023", "scope": {}}})  # the reply alone
    seen = []

    class Clarifying(IterativeRetriever):
        def forward(self, question, doc_id=None, bucket=None, tried=None):
            seen.append(tried)
            if len(seen) == 1:
                return dspy.Prediction(status="clarify", answer="", clarification=clarify["clarification"],
                                       failed_searches=[failure], citations=[], rows=[])
            return super().forward(question, doc_id, bucket, tried)

    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        conversation = Conversation(small_corpus, Clarifying(small_corpus), repairs=True)
        asked = conversation.turn("What was total revenue?")
        assert asked.result.status == "clarify" and conversation.state.pending
        turn = conversation.turn("2023")
    (rewrite,) = calls(engine, "rewrite")
    assert rewrite["last_outcome"] == "asked the user: Which year: 2023 or 2022?" and rewrite["turn"] == "2023"
    assert not turn.new_topic  # a reply to a clarification is never a new topic
    assert seen == [None, [failure]] and turn.result.status == "answer"
    assert turn.question == "What was total revenue (2023)"  # the rewrite lost the question: joined in code
    assert not conversation.state.pending and conversation.state.tried == turn.result.failed_searches


def test_the_loop_sees_searches_that_failed_before(small_corpus):
    failure = {"item": "What was total revenue?", "strategy": "annotations", "reason": "no row names revenue"}
    lm, engine = scripted_lm({"read": {"calculation": {"expression": ""}, "answer": "", "sources": [],
                                       "missing": "the year"}})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = IterativeRetriever(small_corpus, max_iterations=3)(question="What was total revenue?", tried=[failure])
    assert result.failed_searches[0] == {**failure, "sections_tried": []}
    assert any("no row names revenue" in str(inputs) for name, inputs in engine.calls if name != "route")


def test_commands_act_on_the_last_rows_without_an_lm_call(small_corpus, tmp_path, monkeypatch):
    monkeypatch.setattr(ferret.programs.conversation, "ROWS_SHOWN", 1)
    lm, engine = scripted_lm({"route": LIST_TIRES})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        conversation = Conversation(small_corpus, export_dir=tmp_path)
        listed = conversation.turn("Which receipts contain tires?")
        assert listed.result.status == "answer" and [row["label"] for row in listed.rows] == ["All-season tires"]
        before = len(engine.calls)
        rest = conversation.turn("show the rest")
        done = conversation.turn("show more")
        exported = conversation.turn(f"export that table to {tmp_path / 'tires.csv'}")
        default = conversation.turn("export it")
    assert len(engine.calls) == before
    assert rest.kind == "show_more" and [row["label"] for row in rest.rows] == ["Winter tires"]
    assert rest.result.answer == "rows 2-2 of 2" and done.result.answer == "all 2 rows were shown"
    assert exported.kind == "export" and exported.result.answer == f"2 rows written to {tmp_path / 'tires.csv'}"
    with open(tmp_path / "tires.csv", newline="") as handle:
        assert sorted(row["label"] for row in csv.DictReader(handle)) == ["All-season tires", "Winter tires"]
    assert default.path == str(tmp_path / "ferret-chat-rows.csv")


def test_show_more_without_rows_is_a_question(chat):
    conversation, engine = chat
    turn = conversation.turn("show more")
    assert turn.kind == "question" and "read" in engine.steps()


def test_a_session_resumes_after_a_restart_and_sees_only_its_own_turns(small_corpus):
    lm, engine = scripted_lm({"read": READ_REVENUE,
                              "rewrite": {"new_topic": False, "question": "What was total revenue in 2022?", "scope": {}}})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        first = Conversation(small_corpus, session=True)
        first.turn(REVENUE)
        other = Conversation(small_corpus, session=True)
        other.turn("How much did the valve caps cost?")
        assert "rewrite" not in engine.steps()  # the other session's first turn is its own question
        resumed = Conversation(small_corpus, session=first.session)  # as after a restart: state from SQLite
        assert resumed.state.last_question == REVENUE and [t["text"] for t in resumed.turns_so_far] == [REVENUE]
        turn = resumed.turn("and in 2022?")
    (rewrite,) = calls(engine, "rewrite")
    assert rewrite["last_question"] == REVENUE and "valve caps" not in str(rewrite)
    assert turn.n == 2 and turn.question == "What was total revenue in 2022?"
    store = SessionStore(small_corpus.store.dir)
    stored = store.turns(first.session)
    assert [(t["n"], t["text"], t["question"]) for t in stored] == [(1, REVENUE, REVENUE),
                                                                  (2, "and in 2022?", "What was total revenue in 2022?")]
    assert stored[0]["result"]["citations"] and stored[0]["result"]["citations"][0]["verified"]
    assert [t["text"] for t in store.turns(other.session)] == ["How much did the valve caps cost?"]
    listed = {s["id"]: s for s in store.sessions()}
    assert listed[first.session]["turns"] == 2 and listed[other.session]["first"] == "How much did the valve caps cost?"


def test_an_unknown_session_is_named(small_corpus):
    with pytest.raises(ValueError, match="unknown session 'nope'"):
        Conversation(small_corpus, session="nope")


def typed(monkeypatch, lines):
    """The terminal's input: `lines`, then end of input."""
    queue = iter(lines)

    def read(prompt=""):
        try:
            return next(queue)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr("builtins.input", read)


def test_ferret_chat_prints_citations_under_answers_keeps_commands_and_resumes(small_corpus, monkeypatch, capsys,
                                                                             tmp_path):
    lm, engine = scripted_lm({"read": READ_REVENUE,
                              "rewrite": {"new_topic": False, "question": "What was total revenue in 2022?", "scope": {}}})
    monkeypatch.setattr("ferret.programs.lm.make_lm", lambda spec=None: lm)
    index = str(small_corpus.store.dir)
    typed(monkeypatch, [REVENUE, "/sources", f"/export {tmp_path / 'x.csv'}", "/new", "/bogus", "why? " * 1000, "/quit",
                        "never read"])
    assert main(["chat", "--index", index]) == 0
    out = capsys.readouterr().out
    session = out.split()[1]
    answer = out[out.index("ferret> "):].splitlines()
    assert "3,650" in answer[0] and answer[1] == "  grounded: 3,650 · Total revenue · 2023 · p.1"  # what grounded it
    assert answer[2].startswith("  [1] report.md p.1 · ") and answer[2].endswith("(grounded)")
    assert '"' in out[out.index("[1] report ·"):]  # /sources quotes the cited text
    assert "the last answer has no rows to export" in out and "new topic: the summary and scope are cleared" in out
    assert "unknown command /bogus" in out and not (tmp_path / "x.csv").exists()
    assert "ferret: error: question of 4,999 characters: at most 4,000" in out  # refused, and the chat went on

    typed(monkeypatch, ["and in 2022?"])
    assert main(["chat", "--index", index, "--session", session]) == 0
    out = capsys.readouterr().out
    assert f"  1. {REVENUE}" in out and "(read as: What was total revenue in 2022?)" in out
    assert calls(engine, "rewrite")[0]["last_question"] == REVENUE  # resumed: the state came from sessions.db

    assert main(["chat", "--index", index, "--list"]) == 0
    listed = [line for line in capsys.readouterr().out.splitlines() if line.startswith(session)]
    assert len(listed) == 1 and "2 turns" in listed[0] and REVENUE[:40] in listed[0]

    client = mlflow.MlflowClient(tracking_uri())
    (run,) = client.search_runs([client.get_experiment_by_name("chat").experiment_id], f"params.session = '{session}'")
    assert [m.step for m in client.get_metric_history(run.info.run_id, "answered")] == [1, 2]
    assert [a.path for a in client.list_artifacts(run.info.run_id, "turns")] == ["turns/001.json", "turns/002.json"]


def test_ferret_chat_names_an_unknown_session_before_the_model_loads(small_corpus, monkeypatch, capsys):
    monkeypatch.setattr("ferret.programs.lm.make_lm", lambda spec=None: pytest.fail("the model was loaded"))
    assert main(["chat", "--index", str(small_corpus.store.dir), "--session", "nope"]) == 2
    assert capsys.readouterr().err.startswith("ferret: error: unknown session 'nope'")


def test_the_sample_conversations_cover_each_behaviour_and_keep_a_conversation_in_one_split():
    examples, folders = load_dataset("sample-chat", SAMPLE)
    conversations = {example.conversation for example in examples}
    assert len(conversations) >= 8 and len(examples) >= 30 and {f.name for f in folders} >= {"invoices", "reports"}
    later = [example for example in examples if example.turn > 1]
    assert {"show_more", "export"} <= {example.kind for example in examples}
    assert any(example.expected_status == "clarify" for example in examples)  # then answered by the next turn
    assert any(example.new_topic for example in later) and any(example.absent for example in later)
    assert sum(1 for example in later if example.question != example.standalone) >= 15  # follow-ups to rewrite
    for part in ("train", "dev", "test"):
        for example in split(examples, part):
            assert all(other in split(examples, part) for other in examples if other.conversation == example.conversation)


def test_the_turn_metrics():
    follow_up = dspy.Example(kind="question", mentions=["Northwind", "total assets", "2023"], absent=["2022"],
                             expected_status="answer", answer="$1,959.3 million")
    read = dspy.Prediction(kind="question", status="answer", answer="$1,959.3 million",
                           rewritten="What were Northwind's total assets at the end of 2023?")
    assert rewrite_correct(follow_up, read) == 1.0 and turn_correct(follow_up, read) == 1.0
    assert rewrite_correct(follow_up, dspy.Prediction(rewritten="And its total assets at the end of that year?")) == 0.0
    assert rewrite_correct(follow_up, dspy.Prediction(rewritten="Northwind total assets 2023 vs 2022")) == 0.0
    rest = dspy.Example(kind="show_more", mentions=[], absent=[])
    assert turn_correct(rest, dspy.Prediction(kind="show_more", status="answer")) == 1.0
    assert turn_correct(rest, dspy.Prediction(kind="question", status="answer", answer="x")) == 0.0


def test_ferret_eval_sample_chat_reports_turn_and_rewrite_accuracy(sample_index, monkeypatch, capsys):
    """The scripted rewrite reads each follow-up as its gold question; the scripted read answers nothing."""
    examples, _ = load_dataset("sample-chat", SAMPLE)
    gold = {example.question: example.standalone for example in examples}
    lm, engine = scripted_lm({"rewrite": lambda inputs: {"new_topic": False, "question": gold[inputs["turn"]],
                                                         "scope": {}}})
    monkeypatch.setattr(ferret.optimizers.evaluate, "make_lm", lambda spec=None, threads=None: lm)
    assert main(["eval", "--dataset", "sample-chat", "--data", str(SAMPLE), "--index", str(sample_index),
                 "--split", "all", "--limit", "7", "--max-iterations", "1", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["dataset"] == "sample-chat" and summary["n"] == 7
    assert summary["rewrite_accuracy"] == 1.0  # the gold rewrites name every mention
    assert [inputs["turn"] for name, inputs in engine.calls if name == "rewrite"] == [
        example.question for example in examples[:7] if example.turn > 1]
    client = mlflow.MlflowClient(tracking_uri())
    path = client.download_artifacts(summary["mlflow_run_id"], "results.csv")
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["rewritten"] for row in rows] == [example.standalone for example in examples[:7]]
    assert [row["id"] for row in rows] == [example.id for example in examples[:7]]
    answered = [row for row in rows if row["status"] != "fail"]  # the read found nothing: only code answers
    assert answered and {row["answered_by"] for row in answered} == {"table"}


@pytest.mark.parametrize("written, standalone", [
    (REVENUE, "How many employees did it have then? (2023)"),  # the last question copied: resolved in code
    ("", "How many employees did it have then? (2023)"),  # nothing written
    ("How many employees did it have then?", "How many employees did it have then? (2023)"),  # the turn as is
    ("How many employees did the company have in 2023?", "How many employees did the company have in 2023?"),
])
def test_a_rewrite_that_drops_what_the_turn_adds_is_resolved_in_code(chat, written, standalone):
    conversation, engine = chat
    engine.script["rewrite"] = [{"new_topic": True, "question": written, "scope": {}}]
    conversation.turn(REVENUE)
    turn = conversation.turn("How many employees did it have then?")
    assert not turn.new_topic  # "it", "then": the turn refers back, whatever the rewrite says
    assert turn.question == standalone and calls(engine, "read")[-1]["question"] == standalone


def test_the_code_rewrite_carries_years_and_names_and_a_clarification():
    last = ChatState(last_question="What was Northwind's net income for 2023?")
    assert resolve("And its total assets?", last) == "And its total assets? (2023, Northwind)"
    assert resolve("And in 2022?", last) == "And in 2022?"  # the turn names its year
    pending = ChatState(last_question="What was the total of the Redline invoice?", pending=True)
    assert resolve("The one numbered RTW-23-0600.", pending) == \
        "What was the total of the Redline invoice (The one numbered RTW-23-0600.)"
    assert is_new_topic("New question: how wide is the SP-540?", False)
    assert not is_new_topic("And what were its capital expenditures?", True)
    assert is_new_topic("How wide is the SP-540?", True) and not is_new_topic("How wide is the SP-540?", False)
    assert not keeps_turn("What was Northwind's net income for 2023?", "And its total assets?",
                          "What was Northwind's net income for 2023?")
    assert not keeps_turn("Consumer segment's operating margin that year?",
                          "What was the Consumer segment's operating margin that year?", "What was … in 2023?")
    assert keeps_turn("What were Northwind's total assets in 2023?", "And its total assets?", "What was … 2023?")


def test_a_conversation_compiles_like_the_other_programs(chat, tmp_path, capsys):
    """BootstrapFewShot over (turn, state) examples keeps the rewrites of the turns it got right as
    RewriteTurn demos; the compiled state saves and loads. `ferret compile` names where to do it."""
    conversation, engine = chat
    engine.script["rewrite"] = [lambda inputs: {"new_topic": False, "scope": {},
                                                "question": f"What was total revenue in {inputs['turn'][-5:-1]}?"}]
    state = ChatState(last_question="What was total revenue in 2023?", summary="Revenue of the report.")
    trainset = [dspy.Example(turn=f"and in {year}?", state=state, mentions=["revenue", str(year)]).with_inputs("turn", "state")
                for year in (2022, 2021)]
    compiled = dspy.BootstrapFewShot(metric=lambda example, pred, trace=None: rewrite_correct(
        example, dspy.Prediction(rewritten=pred.question)), max_bootstrapped_demos=2, max_labeled_demos=0).compile(
        conversation, trainset=trainset)
    assert [demo["turn"] for demo in compiled.rewrite.demos] == ["and in 2022?", "and in 2021?"]
    compiled.save(tmp_path / "chat.json")
    fresh = Conversation(conversation.corpus)
    fresh.load(tmp_path / "chat.json")
    assert [demo["question"] for demo in fresh.rewrite.demos] == ["What was total revenue in 2022?",
                                                                  "What was total revenue in 2021?"]
    assert main(["compile", "--dataset", "sample-chat", "--data", str(SAMPLE), "--optimizer", "bootstrap"]) == 2
    assert "sample-chat is a set of conversations" in capsys.readouterr().err
