"""Retrieval-only evaluation of the search tools (no LM): text, semantic and hybrid search, "hops"
(hybrid search, then the bridges and parts it leads to, `programs.hops`) and "long_text" (hybrid search
over long documents' chunk summaries, then over the segments inside the chunks it picked; plain hybrid
search where no document has chunks, as in passage sets), and "read": what the iterative program's
first read searches at its retrieval settings (`programs.first_read`; the defaults', a hybrid search, or a
compiled program's, `ferret eval --retrieval --compiled FILE`).

The unit of relevance is the evidence page, (doc_id, page), when every evidence item of an example
names a page (FinanceBench; the search is then restricted to the example's doc_id when it has one,
as FinanceBench questions name their filing), else the document (passage datasets: HotpotQA,
TAT-QA, SciFact; the search is open over the whole index). Hits (segments) are reduced to their
distinct units in rank order; on those, per example:
- recall@k: the share of gold units in the top k; recall_all@k / recall_any@k: all / at least one;
- ndcg@10: binary-relevance nDCG; recall@100: recall in the top 100 units.
Hybrid search fuses the top 300 segments of each method (`corpus.tools._fuse`).
"""
from __future__ import annotations

import math
from pathlib import Path

from ferret.corpus.tools import Corpus
from ferret.optimizers.datasets import DATASETS, load_dataset, prepare_index, split
from ferret.optimizers.metrics import text_gold
from ferret.programs.first_read import ReadSettings, first_read
from ferret.programs.hops import hop_search

MODES = ("text", "semantic", "hybrid", "hops", "long_text", "read")
GOLDS = ("text", "number")  # questions kept by the kind of their gold answer
NDCG_AT, DEEP_AT = 10, 100
SEARCH_DEPTH = 300  # segments retrieved per query, reduced to distinct units


def search(corpus: Corpus, mode: str, query: str, top_k: int, doc_id: str | None = None,
           settings: ReadSettings = ReadSettings()) -> list[dict]:
    """The mode's hits; "read" is the iterative program's first read at `settings` (`programs.first_read`,
    with no Router: the long-text route is taken for a question about one document)."""
    if mode == "read":
        return first_read(corpus, query, top_k, settings, doc_id=doc_id).hits
    if mode == "hops":
        return hop_search(corpus, query, top_k, doc_id=doc_id).hits
    if mode == "long_text":
        return corpus.search_long_text(query, top_k=top_k, doc_id=doc_id)["hits"]
    tool = corpus.search_semantic if mode == "semantic" else corpus.search_text
    return tool(query, top_k=top_k, doc_id=doc_id, hybrid=mode == "hybrid")


def page_level(evidence: list[dict]) -> bool:
    return bool(evidence) and all(item.get("page") for item in evidence)


def unit(item: dict, pages: bool):
    return (item["doc_id"], item["page"]) if pages else item["doc_id"]


def ranked_units(hits: list[dict], pages: bool) -> list:
    """The distinct units of the hits, in rank order."""
    return list(dict.fromkeys(unit(hit, pages) for hit in hits))


def recall(ranked: list, gold: set, k: int) -> float:
    return len(gold & set(ranked[:k])) / len(gold)


def ndcg(ranked: list, gold: set, k: int) -> float:
    """Binary-relevance nDCG@k: sum of 1/log2(rank + 1) over gold units in the top k, over the ideal."""
    dcg = sum(1 / math.log2(rank + 2) for rank, item in enumerate(ranked[:k]) if item in gold)
    ideal = sum(1 / math.log2(rank + 2) for rank in range(min(len(gold), k)))
    return dcg / ideal


def scores(ranked: list, gold: set, k: int) -> dict[str, float]:
    """The per-example metrics, keyed by the suffix of the result keys."""
    found = recall(ranked, gold, k)
    return {f"recall@{k}": found, f"recall_all@{k}": float(found == 1.0), f"recall_any@{k}": float(found > 0),
            f"ndcg@{NDCG_AT}": ndcg(ranked, gold, NDCG_AT), f"recall@{DEEP_AT}": recall(ranked, gold, DEEP_AT)}


def example_scores(corpus: Corpus, examples: list, hits, k: int = 5, query_from: str = "question") -> list[dict[str, float]]:
    """The metrics (`scores`) of each of `examples` (each with evidence), of the hits that `hits(query,
    doc_id)` gives for it: its question (or, `query_from` "evidence", its first evidence text), searched
    inside its document where its evidence names pages and the index holds it."""
    known, found = set(corpus.doc_ids), []
    for example in examples:
        pages = page_level(example.evidence)
        query = example.question if query_from == "question" else example.evidence[0]["text"]
        doc_id = example.get("doc_id") if pages and example.get("doc_id") in known else None
        found.append(scores(ranked_units(hits(query, doc_id), pages), {unit(item, pages) for item in example.evidence}, k))
    return found


def averaged(found: list[dict[str, float]]) -> dict[str, float]:
    """Each metric of `example_scores` averaged over the examples (rounded to 3 places)."""
    return {name: round(sum(one[name] for one in found) / len(found), 3) for name in found[0]} if found else {}


def evaluate_recall(dataset: str, data: str | Path, index_dir: str | Path, k: int = 5,
                    modes: tuple[str, ...] = MODES, query_from: str = "question", limit: int | None = None,
                    gold: str | None = None, split_name: str = "all", settings: ReadSettings = ReadSettings()) -> dict:
    """Ingest the dataset's documents (a no-op when already there) and measure, per search mode,
    recall@k, recall_all@k, recall_any@k, ndcg@10 and recall@100 (keys "<mode>_<metric>"), averaged
    over the examples of the split `split_name` ("train", "dev", "test" or "all": `datasets.split`) that
    have evidence; `limit` keeps the first N of them.

    query_from: "question", or "evidence" (the gold evidence text itself as the query: FinanceBench,
    or JSONL evidence that carries "text"). For "jsonl" nothing is ingested: the index must hold the
    documents already. gold: "text" or "number" keeps only the questions whose gold answer is of that
    kind (`metrics.text_gold`). settings: the first read's, of mode "read" (a compiled program's).
    """
    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; retrieval recall supports {', '.join(DATASETS)}")
    examples, files = load_dataset(dataset, data)
    if gold is not None and gold not in GOLDS:
        raise ValueError(f"unknown gold kind {gold!r}; allowed: {', '.join(GOLDS)}")
    examples = [example for example in split(examples, split_name) if example.get("evidence")
                and (gold is None or text_gold(example) == (gold == "text"))]
    examples = examples[:limit] if limit else examples
    if query_from == "evidence" and not all(example.evidence[0].get("text") for example in examples):
        raise ValueError(f"query_from='evidence' needs evidence text, which {dataset} examples lack")
    if files:
        prepare_index(files, Path(index_dir))
    elif not Path(index_dir).exists():
        raise FileNotFoundError(f"index {index_dir} not found (ingest the {dataset} documents into it first)")
    corpus = Corpus(index_dir)
    known = set(corpus.doc_ids)
    result: dict = {"dataset": dataset, "split": split_name, "n": len(examples), "k": k, "query_from": query_from,
                    "gold": gold or "all",
                    "gold_docs_not_indexed": len({item["doc_id"] for example in examples
                                                  for item in example.evidence} - known)}
    if not examples:
        return result
    for mode in modes:
        found = example_scores(corpus, examples, lambda query, doc_id: search(corpus, mode, query, SEARCH_DEPTH, doc_id,
                                                                            settings), k, query_from)
        result.update({f"{mode}_{name}": value for name, value in averaged(found).items()})
    return result
