"""The dataset loaders on the real files in ../shared/data, the JSONL format's errors, and splits."""
from __future__ import annotations

import json
import zipfile

import pytest

from ferret.corpus.passages import load_passages
from ferret.optimizers.datasets import DATASETS, load_dataset, load_jsonl, load_scifact, load_tatqa, split, split_ids, split_of
from tests.conftest import SHARED_DATA, shared


@pytest.fixture(scope="module")
def scifact(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FERRET_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield load_scifact(shared(SHARED_DATA / "scifact"))


def test_tatqa_questions_point_at_their_contexts():
    examples, files = load_tatqa(shared(SHARED_DATA / "tatqa"))
    assert len(examples) == 1668 and len({example.id for example in examples}) == 1668
    assert files == [SHARED_DATA / "tatqa" / "tatqa_dataset_dev.json"]
    ids = {doc.doc_id for doc in load_passages(files[0])}  # the file is ingested as-is: one passage per context
    assert len(ids) == 278
    assert {example.doc_id for example in examples} == ids
    assert all(example.evidence == [{"doc_id": example.doc_id}] for example in examples)
    first = examples[0]
    assert first.question == "What is the company paid on a cost-plus type contract?"
    assert isinstance(first.answer, list) and first.answer_from == "text" and first.answer_type == "span"
    assert {example.scale for example in examples} >= {"", "thousand", "million", "percent"}
    assert any(isinstance(example.answer, float) for example in examples)
    assert set(first.inputs().keys()) == {"question"}


def test_scifact_claims_cite_abstracts_of_the_derived_corpus(scifact, tmp_path_factory):
    examples, files = scifact
    assert len(examples) == 300 and len({example.id for example in examples}) == 300
    assert all(example.answer == "" and example.evidence for example in examples)
    assert sum(len(example.evidence) for example in examples) == 340
    (corpus,) = files
    assert SHARED_DATA not in corpus.parents and corpus.suffix == ".jsonl"
    records = [json.loads(line) for line in corpus.read_text().splitlines()]
    assert len(records) == 5183 and set(records[0]) == {"id", "title", "text"}
    by_id = {record["id"]: record for record in records}
    assert {item["doc_id"] for example in examples for item in example.evidence} <= set(by_id)
    # Sentences of the numpy-printed list are kept apart: joined by a space, not glued.
    assert "functional disabilities. A line scan" in by_id["4983"]["text"]
    assert {doc.doc_id for doc in load_passages(corpus)} == set(by_id)


def test_scifact_corpus_is_written_once_per_zip_content(scifact, tmp_path):
    corpus = scifact[1][0]
    stamp = corpus.stat().st_mtime_ns
    again = load_scifact(SHARED_DATA / "scifact" / "scifact.zip")[1][0]  # the zip itself works too
    assert again == corpus and again.stat().st_mtime_ns == stamp
    changed = tmp_path / "scifact.zip"
    changed.write_bytes((SHARED_DATA / "scifact" / "scifact.zip").read_bytes())
    with zipfile.ZipFile(changed, "a") as bundle:
        bundle.comment = b"changed"
    other = load_scifact(changed)[1][0]
    assert other != corpus and other.read_text() == corpus.read_text()
    assert not list(corpus.parent.glob("*.tmp"))


def test_scifact_train_claims(scifact):
    examples, _ = load_scifact(SHARED_DATA / "scifact", claims="train")
    assert len(examples) == 809
    with pytest.raises(ValueError, match="validation, train"):
        load_scifact(SHARED_DATA / "scifact", claims="test")


def test_load_dataset_names_and_missing_paths(tmp_path):
    assert set(DATASETS) == {"financebench", "hotpotqa", "tatqa", "scifact", "sample", "sample-chat", "jsonl"}
    with pytest.raises(ValueError, match="financebench, hotpotqa, tatqa, scifact, sample, sample-chat, jsonl"):
        load_dataset("squad", tmp_path)
    with pytest.raises(FileNotFoundError, match="nowhere"):
        load_dataset("tatqa", tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="tatqa_dataset_dev.json"):
        load_dataset("tatqa", tmp_path)
    with pytest.raises(ValueError, match="is a folder: give the questions' .jsonl file"):
        load_dataset("jsonl", tmp_path)
    examples, files = load_dataset("hotpotqa", shared(SHARED_DATA / "hotpotqa"))
    assert len(examples) == 100 and len(files) == 1


def test_a_sample_folder_is_its_questions_and_its_bucket_folders(tmp_path):
    with pytest.raises(FileNotFoundError, match="qa.jsonl"):
        load_dataset("sample", tmp_path)
    (tmp_path / "qa.jsonl").write_text('{"id": 1, "question": "Total?", "answer": "3", "kind": "aggregate"}\n')
    with pytest.raises(FileNotFoundError, match="no bucket folder"):
        load_dataset("sample", tmp_path)
    for bucket in ("invoices", "contracts"):
        (tmp_path / bucket).mkdir()
        (tmp_path / bucket / "metadata.jsonl").write_text("")
    (tmp_path / "loose").mkdir()  # no metadata.jsonl: not a bucket
    examples, files = load_dataset("sample", tmp_path)
    assert [example.kind for example in examples] == ["aggregate"]
    assert files == [tmp_path / "contracts", tmp_path / "invoices"]


def test_jsonl_examples(tmp_path):
    path = tmp_path / "questions.jsonl"
    path.write_text(
        '{"id": 1, "question": "Revenue in 2023?", "answer": 3650, "doc_id": "report",'
        ' "evidence": [{"doc_id": "report", "page": 2, "text": "Total revenue 3,650"}], "topic": "revenue"}\n'
        "\n"
        '{"id": "b", "question": "Who?", "answer": ["x", "y"], "evidence": [{"doc_id": "wiki", "passage_id": "p7"},'
        ' {"doc_id": "Alu"}]}\n')
    examples, files = load_jsonl(path)
    assert files == []
    first, second = examples
    assert first.id == "1" and first.answer == 3650 and first.doc_id == "report" and first.topic == "revenue"
    assert first.evidence == [{"doc_id": "report", "page": 2, "text": "Total revenue 3,650"}]
    assert second.evidence == [{"doc_id": "p7"}, {"doc_id": "Alu"}] and "doc_id" not in second
    assert set(second.inputs().keys()) == {"question"}


GOOD = '{"id": 1, "question": "q?", "answer": "a", "evidence": [{"doc_id": "d", "page": 1}]}'


@pytest.mark.parametrize("line, message", [
    ('{"id": 2, "question": "q?"', "line 3: Invalid JSON"),
    ('{"id": 2, "answer": "a"}', "line 3: field question: Field required"),
    ('{"id": 2, "question": "q?", "evidence": [{"doc_id": "d", "page": 0}]}', "line 3: field evidence.0.page"),
    ('{"id": 2, "question": "q?", "evidence": [{"page": 3}]}', "line 3: field evidence.0: .*needs doc_id"),
    ('{"id": 2, "question": "q?", "evidence": [{"doc_id": "d", "pg": 3}]}', "line 3: field evidence.0.pg"),
    ('{"id": 1, "question": "q?"}', "line 3: field id: duplicate id '1'"),
])
def test_jsonl_errors_name_file_line_and_field(tmp_path, line, message):
    path = tmp_path / "mine.jsonl"
    path.write_text(f"{GOOD}\n\n{line}\n")
    with pytest.raises(ValueError, match=f"mine.jsonl, {message}"):
        load_jsonl(path)


def test_split_is_deterministic_disjoint_and_complete():
    examples, _ = load_tatqa(shared(SHARED_DATA / "tatqa"))
    parts = {name: split_ids(examples, name) for name in ("train", "dev", "test")}
    assert parts == {name: split_ids(list(reversed(examples)), name)[::-1] for name in parts}
    ids = [example.id for example in examples]
    assert sorted(i for part in parts.values() for i in part) == sorted(ids) == sorted(split_ids(examples, "all"))
    assert all(not set(parts[a]) & set(parts[b]) for a, b in [("train", "dev"), ("train", "test"), ("dev", "test")])
    assert 0.35 < len(parts["train"]) / len(ids) < 0.45 and 0.35 < len(parts["dev"]) / len(ids) < 0.45
    assert [example.id for example in split(examples, "dev")] == parts["dev"]
    assert split_of("23801627-ff77-4597-8d24-1c99e2452082") == split_of("23801627-ff77-4597-8d24-1c99e2452082")
    assert {split_of(str(i), (1.0, 0.0, 0.0)) for i in range(50)} == {"train"}
    with pytest.raises(ValueError, match="train, dev, test or all"):
        split(examples, "validation")
