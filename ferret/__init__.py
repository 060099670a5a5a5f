"""ferret: questions over document corpora answered by agentic, iterative retrieval, as a DSPy program.

    from ferret import IterativeRetriever, answering, chunk_summarizer, ingest, make_lm

    ingest(["reports/"], "runs/index")           # LM-written chunk summaries: summaries="local", summarizer=chunk_summarizer
    with answering(make_lm("local")):            # or any LiteLLM model string
        result = IterativeRetriever("runs/index")(question="What was Consumer revenue in 2023?")
    result.status, result.answer, result.citations, result.grounding

The parts: `ferret.corpus` (ingest, indexes, the agents' tools), `ferret.signatures` (the steps'
typed signatures), `ferret.programs` (the loop, the baselines, conversations, the LM),
`ferret.optimizers` (datasets, metrics, evaluation, compilation, MLflow tracking), `ferret.cli`
(the `ferret` command). Names are imported on first use, so `import ferret` loads neither DSPy nor torch.
"""
from importlib import import_module

_EXPORTS = {
    "Corpus": "ferret.corpus.tools",
    "ingest": "ferret.corpus.ingest",
    "IterativeRetriever": "ferret.programs.iterative",
    "OneShotRAG": "ferret.programs.baselines",
    "ReActAgent": "ferret.programs.baselines",
    "Conversation": "ferret.programs.conversation",
    "make_lm": "ferret.programs.lm",
    "answering": "ferret.programs.lm",
    "make_program": "ferret.programs",
    "load_compiled": "ferret.programs",
    "chunk_summarizer": "ferret.programs",
}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'ferret' has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
