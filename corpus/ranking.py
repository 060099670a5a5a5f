"""The best rows of a score vector, shared by lexical and dense search."""
from __future__ import annotations

import numpy as np


def top_rows(scores: np.ndarray, k: int, positive: bool = False) -> list[tuple[int, float]]:
    """The `k` highest-scoring rows as (row, score), best first; rows scored -inf (filtered out), and
    with `positive` rows scored 0 or less (no match), are left out."""
    if len(scores) == 0 or k <= 0:
        return []
    k = min(k, len(scores))
    idx = np.argpartition(-scores, k - 1)[:k]
    idx = idx[np.argsort(-scores[idx], kind="stable")]
    return [(int(i), float(scores[i])) for i in idx if np.isfinite(scores[i]) and (not positive or scores[i] > 0)]
