"""Bad input is refused before any work: one line naming the value and what is allowed, exit code 2."""
from __future__ import annotations

import subprocess
import sys

import dspy
import pytest

from ferret.programs import load_compiled, make_program
from ferret.cli import main
from ferret.paths import PACKAGE
from tests.fakes import scripted_lm


@pytest.mark.parametrize("argv, named", [
    (["search", ""], "argument query: '' is empty"),
    (["search", "net revenue", "--top-k", "-5"], "argument --top-k: -5 is out of range: allowed 1 to 1000"),
    (["search", "net revenue", "--top-k", "ten"], "argument --top-k: 'ten' is not a whole number"),
    (["search", "net revenue", "--context-chars", "-1"], "argument --context-chars: -1 is out of range"),
    (["ask", "   "], "argument question: '   ' is empty"),
    (["ask", "What?", "--max-iterations", "0"], "argument --max-iterations: 0 is out of range: allowed 1 to 20"),
    (["ask", "What?", "--long-text", "maybe"], "argument --long-text: 'maybe' is not one of on, off"),
    (["eval", "--dataset", "tatqa", "--data", "x", "--limit", "0"], "argument --limit: 0 is out of range"),
    (["eval", "--dataset", "tatqa", "--data", "x", "--threads", "100000"], "argument --threads: 100000 is out of range"),
    (["compile", "--dataset", "tatqa", "--data", "x", "--optimizer", "bootstrap", "--val", "-1"],
     "argument --val: -1 is out of range"),
])
def test_bad_options_get_one_line_and_exit_code_2_before_anything_opens(argv, named, capsys, tmp_path):
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--index", str(tmp_path / "no-such-index")])
    out, err = capsys.readouterr()
    assert exited.value.code == 2 and out == ""
    assert err.count("\n") == 1 and named in err and "Traceback" not in err
    assert not (tmp_path / "no-such-index").exists()


@pytest.mark.parametrize("argv, named", [
    (["ask", "What was total revenue?", "--doc", "reprot"], "unknown document 'reprot'; did you mean: report"),
    (["ask", "What was total revenue?", "--bucket", "contracts"], "unknown bucket 'contracts'; known buckets: invoices, reports"),
    (["search", "revenue", "--doc", "nope"], "unknown document 'nope'"),
])
def test_an_unknown_document_or_bucket_is_named_before_the_model_is_called(argv, named, small_corpus, capsys,
                                                                          monkeypatch):
    lm, engine = scripted_lm()
    monkeypatch.setattr("ferret.programs.lm.make_lm", lambda spec=None: lm)
    assert main([*argv, "--index", str(small_corpus.store.dir)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ferret: error: ") and named in err and err.count("\n") == 1 and engine.calls == []


@pytest.mark.parametrize("program", ["iterative", "oneshot", "react"])
@pytest.mark.parametrize("question, doc_id, named", [
    ("", None, "question '' is empty"),
    (" \n", None, "question ' \\n' is empty"),
    (None, None, "question None is empty"),
    ("What was total revenue?", "reprot", "unknown document 'reprot'"),
    ("What was total revenue? " * 200, None, "question of 4,800 characters: at most 4,000"),
])
def test_programs_refuse_bad_input_without_an_lm_call(program, question, doc_id, named, small_corpus):
    lm, engine = scripted_lm()
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()), pytest.raises(ValueError) as refused:
        make_program(program, small_corpus)(question=question, doc_id=doc_id)
    assert named in str(refused.value) and engine.calls == []


@pytest.mark.parametrize("call, named", [
    (lambda corpus: corpus.search_text("  "), "query '  ' is empty"),
    (lambda corpus: corpus.search_semantic("revenue", top_k=0), "top_k must be a whole number from 1 to 1000, not 0"),
    (lambda corpus: corpus.search_text("revenue", top_k=10**6), "top_k must be a whole number from 1 to 1000"),
    (lambda corpus: corpus.search_text("revenue", top_k=True), "not True"),
    (lambda corpus: corpus.annotations_search(""), "label_query '' is empty"),
    (lambda corpus: corpus.annotations_search("revenue", top_k=-1), "top_k must be a whole number"),
    (lambda corpus: corpus.annotations_aggregate(" ", "sum"), "label_query ' ' is empty"),
])
def test_tools_name_the_bad_argument(call, named, small_corpus):
    with pytest.raises(ValueError) as refused:
        call(small_corpus)
    assert named in str(refused.value)


@pytest.mark.parametrize("content, named", [
    (None, "no such file"),
    ("{not json", "is not a JSON program state: Expecting property name"),
    ('{"answer.predict": {"demos": []}, "metadata": {}}', "is not a state of IterativeRetriever: it lacks route, read.predict"),
    ("[]", "it lacks route"),
])
def test_a_compiled_file_that_is_not_this_programs_state_is_named(content, named, small_corpus, tmp_path, capsys):
    state = tmp_path / "compiled.json"
    if content is not None:
        state.write_text(content)
    assert main(["ask", "What was total revenue?", "--index", str(small_corpus.store.dir), "--compiled", str(state)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ferret: error: compiled program {state}") and named in err and err.count("\n") == 1


def test_a_compiled_state_of_the_program_loads(small_corpus, tmp_path):
    program = make_program("iterative", small_corpus)
    program.read.predict.demos = [dspy.Example(question="q", passages=[], answer="a")]
    program.save(tmp_path / "state.json")
    fresh = make_program("iterative", small_corpus)
    load_compiled(fresh, tmp_path / "state.json")
    assert [demo["answer"] for demo in fresh.read.predict.demos] == ["a"]


def test_an_lm_string_litellm_cannot_route_is_named_before_any_question(capsys, small_corpus):
    assert main(["ask", "What was total revenue?", "--index", str(small_corpus.store.dir), "--lm", "foo/bar"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("ferret: error: LM 'foo/bar' is not one LiteLLM can call: LLM Provider NOT "
                                        "provided.") and err.count("\n") == 1


@pytest.mark.parametrize("argv", [
    ["search", "revenue", "--doc", "nope"],
    ["search", "revenue", "--filters", '{"colour": "red"}'],
    ["ask", "What was total revenue?", "--doc", "nope"],
    ["ask", "What was total revenue?", "--bucket", "nope"],
    ["eval", "--dataset", "tatqa", "--data", "no-such-folder"],
    ["compile", "--dataset", "tatqa", "--data", "no-such-folder", "--optimizer", "bootstrap"],
])
def test_bad_input_is_refused_before_torch_mlflow_or_litellm_load(argv, small_corpus):
    """Those imports cost seconds each: a refusal that needs none of them comes at once."""
    done = _run_cli(argv + ["--index", str(small_corpus.store.dir)])
    assert done.stdout.split() == ["2"], done.stdout + done.stderr
    assert done.stderr.startswith("ferret: error: ") and done.stderr.count("\n") == 1


def test_an_ingest_of_only_bad_files_does_not_load_the_embedder(tmp_path):
    (tmp_path / "fake.pdf").write_text("not a pdf")
    done = _run_cli(["ingest", str(tmp_path / "fake.pdf"), "--index", str(tmp_path / "index")])
    assert done.stdout.splitlines()[-1] == "1", done.stdout + done.stderr  # exit code 1, and no torch loaded
    assert "fake.pdf: not a PDF" in done.stderr


def _run_cli(argv: list[str]) -> subprocess.CompletedProcess:
    """`ferret ARGV` in a fresh interpreter; prints the exit code, then which heavy modules it imported."""
    script = ("import sys\nfrom ferret.cli import main\ncode = main(sys.argv[1:])\n"
              "print(code, *sorted(m for m in ('torch', 'mlflow', 'litellm') if m in sys.modules))")
    return subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, cwd=PACKAGE, timeout=120)
