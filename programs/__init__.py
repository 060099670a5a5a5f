"""The DSPy programs: the iterative loop and the one-call and ReAct baselines.

    from ferret.programs import IterativeRetriever
    IterativeRetriever("runs/index")(question="...")   # a dspy.Prediction

Imports are lazy so that `ferret ingest` and `ferret search` do not load DSPy's programs.
"""
PROGRAM_NAMES = ("iterative", "oneshot", "react")
# The iterative program's iterations by default: the first read and the hops read. On every split of the three
# sets the ladder after them showed no scripted reader a gold answer the reads had not, and cost the embedded
# model some 40% of its seconds with no right answer gained on train (docs/benchmarks.md); more runs it.
DEFAULT_ITERATIONS = 2


def make_program(name: str, corpus, max_iterations: int | None = None, accept: str = "grounded",
                 repairs: bool | None = None, long_text: bool | None = None):
    """The program called `name` (iterative, oneshot or react) over an opened corpus or index path, stating
    answers grounded at `accept` or better (`programs.grounding`); `repairs`: the iterative program's
    small-model repairs (`programs.repairs`; None decides by the LM, the baselines have none); `long_text`:
    its long-text first read (`IterativeRetriever`; None: its default)."""
    from ferret.programs.baselines import OneShotRAG, ReActAgent
    from ferret.programs.iterative import IterativeRetriever

    if name == "iterative":
        return IterativeRetriever(corpus, accept=accept, repairs=repairs,
                                  **({} if max_iterations is None else {"max_iterations": max_iterations}),
                                  **({} if long_text is None else {"long_text": long_text}))
    if name == "oneshot":
        return OneShotRAG(corpus, accept=accept)
    if name == "react":
        return ReActAgent(corpus, accept=accept)
    raise ValueError(f"unknown program {name!r}; programs: {', '.join(PROGRAM_NAMES)}")


def chunk_summarizer(spec: str):
    """The chunk summarizer of the LM `spec` ("local", a GGUF file or a LiteLLM model string, as for `--lm`;
    `programs.summaries.ChunkSummarizer`): what callers of `corpus.ingest.ingest` pass as `summarizer`, which
    the ingest calls only when an LM writes the summaries (so an ingest without one does not import DSPy)."""
    from ferret.programs.summaries import ChunkSummarizer

    return ChunkSummarizer(spec)


def load_compiled(program, path, **explicit) -> None:
    """Load a compiled state (`ferret compile`'s JSON) into `program`, after checking that the file is
    JSON holding every predictor of this program: ValueError naming the file and what is wrong. The
    program's settings become the saved ones (`programs.settings`), except those given in `explicit`
    with a value other than None (a command's --max-iterations, --repairs)."""
    import json
    from pathlib import Path

    path, kind = Path(path), type(program).__name__
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"compiled program {path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"compiled program {path} is not a JSON program state: {error}") from None
    wanted = [name for name, _ in program.named_predictors()]
    missing = [name for name in wanted if not isinstance(state, dict) or not isinstance(state.get(name), dict)]
    if missing:
        held = ", ".join(key for key in state if key != "metadata") if isinstance(state, dict) else type(state).__name__
        raise ValueError(f"compiled program {path} is not a state of {kind}: it lacks {', '.join(missing)} "
                         f"(it holds {held or 'nothing'})")
    try:
        program.load(path, allow_unsafe_lm_state=True)
    except ValueError as error:
        raise ValueError(f"compiled program {path}: {error}") from None
    for name, value in explicit.items():
        if value is not None and name in getattr(program, "SETTINGS", ()):
            setattr(program, name, value)


def __getattr__(name):
    if name == "IterativeRetriever":
        from ferret.programs.iterative import IterativeRetriever

        return IterativeRetriever
    if name in ("OneShotRAG", "ReActAgent"):
        from ferret.programs import baselines

        return getattr(baselines, name)
    if name == "make_lm":
        from ferret.programs.lm import make_lm

        return make_lm
    raise AttributeError(name)
