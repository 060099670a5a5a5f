"""BM25 over shards: the scores of one bm25s index built over the live rows, whatever the shards."""
from __future__ import annotations

import bm25s
import numpy as np

from ferret.corpus.lexical import BM25, TermCounts, tokenize
from tests.conftest import RECEIPTS, REPORT

TEXTS = [*REPORT.split("\n\n"), *(text for receipt in RECEIPTS.values() for text in receipt.split("\n\n")),
         "...", "Revenue revenue revenue from tires.", "Winter tires and batteries, revenue by segment."]
QUERIES = ["revenue", "winter tires revenue", "segment revenue revenue", "batteries", "accounting policy control",
           "no such words zyxw"]


def one_index_scores(texts: list[str], query: str) -> np.ndarray:
    index = bm25s.BM25()
    index.index([tokens or ["\x00"] for tokens in tokenize(texts)], show_progress=False)
    terms = [term for term in tokenize([query])[0] if term in index.vocab_dict]
    return index.get_scores(terms) if terms else np.zeros(len(texts), dtype=np.float32)


def test_three_shards_with_deleted_rows_score_as_one_index_of_the_live_rows():
    cut = [0, 7, 12, len(TEXTS)]
    shards = [TermCounts.build(TEXTS[a:b]) for a, b in zip(cut, cut[1:])]
    live = [np.array([i % 3 != 1 for i in range(shards[0].size)]), None, np.array([True] * (shards[2].size - 1) + [False])]
    sharded = BM25(shards, live)
    alive = np.concatenate([part if part is not None else np.ones(shard.size, bool) for part, shard in zip(live, shards)])
    live_texts = [text for text, keep in zip(TEXTS, alive) if keep]
    assert live_texts and not alive.all()
    for query in QUERIES:
        scores = sharded.scores(query)
        assert scores.shape == (len(TEXTS),) and (scores[~alive] == 0).all()
        np.testing.assert_array_equal(scores[alive], one_index_scores(live_texts, query), err_msg=query)
    assert sharded.scores("revenue").any()


def test_statistics_are_global_so_a_shard_of_one_row_ranks_as_in_one_index():
    """In a shard of its own a text's IDF would be that of a one-row corpus; here it is the corpus's."""
    alone = BM25([TermCounts.build(TEXTS[:-1]), TermCounts.build(TEXTS[-1:])], [None, None])
    together = BM25([TermCounts.build(TEXTS)], [None])
    for query in QUERIES:
        np.testing.assert_array_equal(alone.scores(query), together.scores(query))


def test_term_counts_survive_saving(tmp_path):
    counts = TermCounts.build(TEXTS)
    counts.save(tmp_path / "terms")
    loaded = TermCounts.load(tmp_path / "terms")
    for query in QUERIES:
        np.testing.assert_array_equal(BM25([loaded], [None]).scores(query), BM25([counts], [None]).scores(query))
    assert BM25([TermCounts.build([])], [None]).scores("revenue").shape == (0,)


def test_a_scoped_search_scores_as_one_index_of_the_live_rows_in_its_scope():
    cut = [0, 9, len(TEXTS)]
    shards = [TermCounts.build(TEXTS[a:b]) for a, b in zip(cut, cut[1:])]
    live = [np.array([i != 2 for i in range(shards[0].size)]), None]
    sharded = BM25(shards, live)
    within = np.array([i % 2 == 0 or i == len(TEXTS) - 1 for i in range(len(TEXTS))])
    kept = within & np.concatenate([live[0], np.ones(shards[1].size, bool)])
    assert kept.any() and (within & ~kept).any()  # the scope holds a deleted row, which stays out
    for query in QUERIES:
        scores = sharded.scores(query, within)
        assert (scores[~kept] == 0).all()
        np.testing.assert_array_equal(scores[kept], one_index_scores([t for t, k in zip(TEXTS, kept) if k], query),
                                      err_msg=query)
    assert not np.array_equal(sharded.scores("winter tires revenue", within)[kept],
                              sharded.scores("winter tires revenue")[kept])  # the scope's statistics, not the corpus's
