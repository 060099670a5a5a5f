"""DSPy programs and the `ferret` command.

    from programs import IterativeRetriever
    IterativeRetriever("runs/index")(question="...")   # a dspy.Prediction

Imports are lazy so that `ferret ingest` and `ferret search` do not load DSPy's programs.
"""
PROGRAM_NAMES = ("iterative", "oneshot", "react")


def make_program(name: str, corpus, max_iterations: int | None = None):
    """The program called `name` (iterative, oneshot or react) over an opened corpus or index path."""
    from programs.baselines import OneShotRAG, ReActAgent
    from programs.iterative import IterativeRetriever

    if name == "iterative":
        return IterativeRetriever(corpus, **({} if max_iterations is None else {"max_iterations": max_iterations}))
    if name == "oneshot":
        return OneShotRAG(corpus)
    if name == "react":
        return ReActAgent(corpus)
    raise ValueError(f"unknown program {name!r}; programs: {', '.join(PROGRAM_NAMES)}")


def __getattr__(name):
    if name == "IterativeRetriever":
        from programs.iterative import IterativeRetriever

        return IterativeRetriever
    if name in ("OneShotRAG", "ReActAgent"):
        from programs import baselines

        return getattr(baselines, name)
    if name == "make_lm":
        from programs.lm import make_lm

        return make_lm
    raise AttributeError(name)
