"""The demos a step is shown: the `k` of its compiled demos whose questions are nearest to the question asked.

A compile (`ferret compile --optimizer knn`, `optimizers.gold_demos`) may give the read a pool of labeled demos
and a `demo_k`: each read is then shown the `demo_k` demos of that pool nearest to its question, by DSPy's
`dspy.KNN` over the corpus's embedder (question against question, cosine). The pool is the read's own saved
demos, so the compiled state is what runs and `load_compiled` restores it; with `demo_k` 0, or a pool no larger
than it, every demo is shown, as DSPy does.
"""
from __future__ import annotations

import dspy
import numpy as np


class NearestDemos:
    """`(demos, question, k) -> demos`: the `k` demos nearest to `question`, nearest first, by the corpus's
    embedder (loaded at the first pool). The pool's vectors are computed once per pool (a compile or a load
    sets a new one)."""

    def __init__(self, corpus):
        self.corpus = corpus
        self._pool: tuple[str, ...] = ()
        self._knn: dspy.KNN | None = None

    def __call__(self, demos: list, question: str, k: int) -> list:
        if k <= 0 or len(demos) <= k:
            return list(demos)
        pool = tuple(demo["question"] for demo in demos)
        if self._knn is None or pool != self._pool or self._knn.k != k:
            examples = [dspy.Example(question=text, index=i).with_inputs("question") for i, text in enumerate(pool)]
            self._pool, self._knn = pool, dspy.KNN(k, examples, vectorizer=self._embed)
        return [demos[example.index] for example in self._knn(question=question)]

    def _embed(self, texts: list[str]) -> np.ndarray:
        return self.corpus.embedder(texts)
