"""`ferret compile --optimizer settings`, no LM: on a corpus where dense search alone finds the evidence
(each fact worded apart from its question, and six notes that repeat the question's words about other
things), the compile picks dense search, saves it, and the reloaded program reads with it; held-out
questions that every search answers alike keep the defaults."""
from __future__ import annotations

import json

import mlflow
import pytest

from ferret.cli import main
from ferret.corpus.ingest import ingest
from ferret.corpus.tools import Corpus
from ferret.optimizers.compile import compile_settings, optimizer_steps
from ferret.optimizers.datasets import load_jsonl, split, split_of
from ferret.optimizers.settings_search import grid, search_settings, sign_test
from ferret.optimizers.tracking import tracking_uri
from ferret.programs import load_compiled
from ferret.programs.first_read import ReadSettings
from ferret.programs.iterative import IterativeRetriever
from tests.fakes import scripted_lm

FACTS = {
    "Feline habits": "The kitten naps on the rug by the fireplace every afternoon.",
    "Automobile care": "Motorists should replace engine lubricant every five thousand miles.",
    "Aviation history": "The Wright brothers flew the first powered aeroplane at Kitty Hawk.",
    "Culinary basics": "Simmer the broth gently so the stock stays clear.",
    "Ocean life": "Whales surface to breathe through the blowhole on their heads.",
    "Dental care": "Brush your teeth twice daily with fluoride paste.",
    "Garden lore": "Sunflowers turn their blossoms to follow daylight across the sky.",
    "Valve caps": "Valve caps are sold in packs of four by Acme Tire Co.",
}
# (question, its fact's title); a paraphrase but for the last, which says the fact's own words
QUESTIONS = [("Where does the cat sleep?", "Feline habits"),
             ("How often should a car get an oil change?", "Automobile care"),
             ("Who made the first airplane flight?", "Aviation history"),
             ("How do you cook soup?", "Culinary basics"),
             ("How do the biggest sea mammals get air?", "Ocean life"),
             ("How often should I clean my mouth?", "Dental care"),
             ("Why do some plants face the sun?", "Garden lore"),
             ("Who sells valve caps in packs of four?", "Valve caps")]


def notes(question: str) -> dict[str, str]:
    """Six notes that print the question's words about nothing it asks."""
    words = " ".join(word.strip("?") for word in question.split() if len(word) > 3)
    return {f"{question[:12]} note {i}": f"Catalogue note {i}: {words} appear here as index entries of unrelated "
            f"filing number {i}." for i in range(6)}


@pytest.fixture(scope="module")
def paraphrases(tmp_path_factory):
    """The corpus, and its questions as the user's JSONL, each asked twice (train ids, then dev ids)."""
    root = tmp_path_factory.mktemp("paraphrases")
    passages = {title: [text] for title, text in FACTS.items()}
    for question, _ in QUESTIONS[:-1]:
        passages.update({title: [text] for title, text in notes(question).items()})
    (root / "passages.json").write_text(json.dumps(passages))
    ingest([root / "passages.json"], root / "index")
    ids = {name: [f"q{i}" for i in range(1, 60) if split_of(f"q{i}") == name] for name in ("train", "dev")}
    qa = root / "qa.jsonl"
    rows = [{"id": ids[name][n], "question": question, "answer": "", "evidence": [{"doc_id": title}]}
            for name in ("train", "dev") for n, (question, title) in enumerate(QUESTIONS)]
    qa.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return root, qa


def test_the_lexical_weight_spans_bm25_hybrid_and_dense_search(paraphrases):
    corpus = Corpus(paraphrases[0] / "index")
    question = QUESTIONS[0][0]
    for weight, same in ((1.0, corpus.search_text(question)), (0.0, corpus.search_semantic(question)),
                         (0.5, corpus.search_text(question, hybrid=True))):
        assert [hit["node_id"] for hit in corpus.search(question, weight)] == [hit["node_id"] for hit in same]
    assert corpus.search(question, 0.0)[0]["doc_id"] == "Feline habits"
    assert "Feline habits" not in [hit["doc_id"] for hit in corpus.search(question, 0.5, top_k=5)]
    for bad in (1.5, -0.1, "0.5", True):
        with pytest.raises(ValueError, match="lexical_weight"):
            corpus.search(question, bad)


def test_a_settings_compile_picks_the_search_that_finds_the_evidence_and_the_program_reads_with_it(
        paraphrases, tmp_path):
    root, qa = paraphrases
    out = tmp_path / "settings.json"
    result = compile_settings("jsonl", qa, root / "index", out=out, track=False)
    assert result["settings"] == {"lexical_weight": 0.0, "hops_first": False, "long_text": False}
    assert result["kept"] == "compiled" and result["train_n"] == result["val_n"] == len(QUESTIONS)
    assert (result["score_before"], result["score_after"]) == (round(1 / len(QUESTIONS), 3), 1.0)  # the plain one
    corpus = Corpus(root / "index")
    assert len(result["trials"]) == len(grid(corpus)) == 10  # passages have no chunks: no long-text trial
    program = IterativeRetriever(corpus)
    load_compiled(program, out)
    assert program.read_settings == ReadSettings(lexical_weight=0.0)
    for question, title in QUESTIONS:
        assert program.first_read_hits(question)[0]["doc_id"] == title
    assert IterativeRetriever(corpus).first_read_hits(QUESTIONS[0][0])[0]["doc_id"] != "Feline habits"


def test_a_holdout_where_no_setting_wins_keeps_the_defaults(paraphrases):
    """Held out: the one question every search answers (its words are its fact's); dense search, the best on
    the paraphrases, only ties the defaults there."""
    root, qa = paraphrases
    corpus = Corpus(root / "index")
    train = split(load_jsonl(qa)[0], "train")
    plain = [example for example in train if example.question == QUESTIONS[-1][0]]
    choice = search_settings(corpus, [example for example in train if example not in plain], holdout=plain)
    assert choice.best == ReadSettings(lexical_weight=0.0) and choice.settings == ReadSettings()
    assert choice.kept == "defaults" and choice.holdout["defaults"] == choice.holdout["compiled"]
    won = search_settings(corpus, train[1:], holdout=train[:1])  # a paraphrase held out: dense search wins there
    assert won.settings == ReadSettings(lexical_weight=0.0) and won.kept == "compiled"


def test_a_best_trial_that_wins_on_too_few_questions_keeps_the_defaults(paraphrases):
    """Dense search finds the evidence of every paraphrase the defaults miss: on seven of them that is
    evidence (p = 1/128), on three a chance it would have one time in eight."""
    root, qa = paraphrases
    corpus = Corpus(root / "index")
    train = split(load_jsonl(qa)[0], "train")
    many = search_settings(corpus, train)
    assert many.sign_test == {"wins": 7, "losses": 0, "p": round(1 / 128, 4)} and many.kept == "compiled"
    few = search_settings(corpus, train[:3])
    assert few.best == ReadSettings(lexical_weight=0.0) and few.settings == ReadSettings() and few.kept == "defaults"
    assert few.sign_test == {"wins": 3, "losses": 0, "p": 0.125}
    assert sign_test([{"recall@5": 1.0}] * 2 + [{"recall@5": 0.0}], [{"recall@5": 0.5}] * 3) == \
        {"wins": 2, "losses": 1, "p": 0.5}


def test_ferret_compile_settings_logs_each_trial_and_eval_retrieval_reads_the_compiled_settings(
        paraphrases, tmp_path, monkeypatch, capsys):
    root, qa = paraphrases
    monkeypatch.setenv("FERRET_HOME", str(tmp_path))
    out = tmp_path / "settings.json"
    assert main(["compile", "--dataset", "jsonl", "--data", str(qa), "--index", str(root / "index"),
                 "--optimizer", "settings", "--out", str(out), "--json"]) == 0
    printed = capsys.readouterr().out
    result = json.loads(printed.strip().splitlines()[-1])
    assert printed.count("  trial  ") == len(result["trials"]) == 10
    mlflow.set_tracking_uri(tracking_uri())
    parent = mlflow.get_run(result["mlflow_run_id"])
    assert parent.data.tags["kept"] == "compiled" and parent.data.params["settings.lexical_weight"] == "0.0"
    trials = mlflow.search_runs(experiment_ids=[parent.info.experiment_id], output_format="list",
                                filter_string=f"tags.mlflow.parentRunId = '{parent.info.run_id}'")
    assert len(trials) == 10 and {trial.data.tags["kind"] for trial in trials} == {"settings-trial"}
    assert main(["eval", "--retrieval", "--dataset", "jsonl", "--data", str(qa), "--index", str(root / "index"),
                 "--split", "dev", "--compiled", str(out), "--no-track", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["read_settings"] == "dense" and summary["read_recall@5"] == summary["semantic_recall@5"] == 1.0
    assert summary["hybrid_recall@5"] < 0.5


def test_the_optimizer_may_be_settings_then_one_prompt_optimizer():
    assert optimizer_steps("settings") == ["settings"] and optimizer_steps("settings,knn") == ["settings", "knn"]
    for bad in ("knn,settings", "settings,settings", "settings,knn,bootstrap", "sgd"):
        with pytest.raises(ValueError, match="unknown optimizer"):
            optimizer_steps(bad)


def test_ferret_chat_reads_with_a_compiled_programs_settings(paraphrases, tmp_path, monkeypatch, capsys):
    root, _ = paraphrases
    corpus = Corpus(root / "index")
    IterativeRetriever(corpus, lexical_weight=0.0).save(tmp_path / "dense.json")
    lm, engine = scripted_lm()
    monkeypatch.setattr("ferret.programs.lm.make_lm", lambda spec=None: lm)
    for compiled, first in (["--compiled", str(tmp_path / "dense.json")], "Feline habits"), ([], None):
        lines = iter([QUESTIONS[0][0], "/quit"])
        monkeypatch.setattr("builtins.input", lambda prompt="": next(lines))
        engine.calls.clear()
        assert main(["chat", "--index", str(root / "index"), "--no-track", *compiled]) == 0
        (read, *_) = [inputs for step, inputs in engine.calls if step == "read"]
        shown = json.loads(read["passages"])[0]
        assert (first in shown) if first else ("Feline habits" not in shown)
    capsys.readouterr()
