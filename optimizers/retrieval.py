"""Retrieval-only evaluation of the search tools (no LM): evidence-page recall@k on FinanceBench,
supporting-passage recall@k on HotpotQA, for text, semantic and hybrid search."""
from __future__ import annotations

from pathlib import Path

from corpus.ingest import ingest
from corpus.tools import Corpus
from optimizers.datasets import load_financebench, load_hotpotqa

LOADERS = {"financebench": load_financebench, "hotpotqa": load_hotpotqa}
MODES = ("text", "semantic", "hybrid")


def search(corpus: Corpus, mode: str, query: str, top_k: int, doc_id: str | None = None) -> list[dict]:
    tool = corpus.search_semantic if mode == "semantic" else corpus.search_text
    return tool(query, top_k=top_k, doc_id=doc_id, hybrid=mode == "hybrid")


def page_hit(hits: list[dict], evidence: list[dict]) -> bool:
    gold = {(item["doc_id"], item["page"]) for item in evidence}
    return any((hit["doc_id"], hit["page"]) in gold for hit in hits)


def passage_recall(hits: list[dict], evidence: list[dict], k: int) -> tuple[bool, bool]:
    """(all gold passages, at least one) among the first k distinct documents of the hits."""
    top = list(dict.fromkeys(hit["doc_id"] for hit in hits))[:k]
    gold = {item["doc_id"] for item in evidence}
    return gold <= set(top), bool(gold & set(top))


def evaluate_recall(dataset: str, data: str | Path, index_dir: str | Path, k: int = 5,
                    modes: tuple[str, ...] = MODES, query_from: str = "question", limit: int | None = None) -> dict:
    """Ingest the dataset's documents (a no-op when already there) and measure recall@k per search mode.

    query_from: "question", or "evidence" (FinanceBench: the gold evidence text itself as the query).
    """
    if dataset not in LOADERS:
        raise ValueError(f"unknown dataset {dataset!r}; retrieval recall supports {', '.join(LOADERS)}")
    examples, files = LOADERS[dataset](data)
    examples = examples[:limit] if limit else examples
    ingest(files, index_dir)
    corpus = Corpus(index_dir)
    result: dict = {"dataset": dataset, "n": len(examples), "k": k, "query_from": query_from}
    for mode in modes:
        if dataset == "financebench":
            found = 0
            for example in examples:
                query = example.question if query_from == "question" else example.evidence[0]["text"]
                found += page_hit(search(corpus, mode, query, k, example.doc_id), example.evidence)
            result[f"{mode}_page_recall@{k}"] = round(found / len(examples), 3)
        else:
            both = anyone = 0
            for example in examples:
                all_found, one_found = passage_recall(search(corpus, mode, example.question, 3 * k),
                                                      example.evidence, k)
                both += all_found
                anyone += one_found
            result[f"{mode}_recall_all@{k}"] = round(both / len(examples), 3)
            result[f"{mode}_recall_any@{k}"] = round(anyone / len(examples), 3)
    return result
