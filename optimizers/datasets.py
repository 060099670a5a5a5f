"""Loaders for labeled QA data, read by path (the data stays where it is).

Each loader returns `(examples, files)`: `dspy.Example`s with `question` as input and `id`, `answer`,
`doc_id` (when the question is about one document) and `evidence` as labels, plus the files to ingest
so that the evidence documents are in the index. `evidence` is a list of {"doc_id", "page"} with
1-based pages (PDFs), or of {"doc_id"} for passages, since each passage is its own document.

`load_dataset(name, data)` picks a loader from `DATASETS`; `split(examples, "dev")` gives a
deterministic train/dev/test part by a stable hash of the example ids.
"""
from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
import os
import tempfile
import tokenize
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import dspy
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ferret.corpus.ingest import BUCKET_METADATA, ingest, ingest_bucket_folder, is_bucket_folder
from ferret.paths import cache_dir
from ferret.programs import chunk_summarizer

Loaded = tuple[list[dspy.Example], list[Path]]
SPLITS = ("train", "dev", "test")
FRACTIONS = (0.4, 0.4, 0.2)  # of each split, by a hash of the example id


def _example(**fields) -> dspy.Example:
    return dspy.Example(**fields).with_inputs("question")


def _require(*paths: Path, hint: str) -> None:
    for path in paths:
        if not path.exists():
            raise FileNotFoundError(f"{path} not found ({hint})")


def _file_in(data: str | Path, name: str) -> Path:
    """`data` is the dataset's folder or the file itself."""
    path = Path(data)
    return path if path.is_file() else path / name


def load_financebench(data: str | Path) -> Loaded:
    """FinanceBench questions and the PDFs they use. Evidence pages convert from the file's 0-based numbers."""
    root = Path(data)
    questions = root / "financebench_open_source.jsonl"
    _require(questions, hint="point --data at the financebench folder")
    examples = []
    for line in questions.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        evidence = [{"doc_id": item["doc_name"], "page": int(item["evidence_page_num"]) + 1,
                     "text": item["evidence_text"]} for item in record["evidence"]]
        examples.append(_example(id=record["financebench_id"], question=record["question"],
                                 answer=record["answer"], doc_id=record["doc_name"], evidence=evidence))
    pdfs = sorted({root / "pdfs" / f"{example.doc_id}.pdf" for example in examples})
    return examples, pdfs


def load_hotpotqa(data: str | Path) -> Loaded:
    """HotpotQA questions (gold = supporting titles) and the passage corpus file."""
    root = Path(data)
    questions, corpus = root / "hotpotqa_train.json", root / "hotpotqa_train_corpus.json"
    _require(questions, corpus, hint="point --data at the hotpotqa folder")
    examples = []
    for number, record in enumerate(json.loads(questions.read_text(encoding="utf-8"))):
        titles = list(dict.fromkeys(title for title, _ in record["supporting_facts"]))
        examples.append(_example(id=str(record.get("_id", number)), question=record["question"],
                                 answer=record["answer"], evidence=[{"doc_id": title} for title in titles]))
    return examples, [corpus]


def load_tatqa(data: str | Path) -> Loaded:
    """TAT-QA: each context (a table plus its paragraphs) is one passage document whose id is the
    table's uid (as `corpus.passages` ingests the file as-is). The answer is as given (a string, a
    number or a list of spans); `scale`, `answer_type`, `answer_from` and `derivation` are kept."""
    path = _file_in(data, "tatqa_dataset_dev.json")
    _require(path, hint="point --data at the tatqa folder or its json file")
    examples = []
    for context in json.loads(path.read_text(encoding="utf-8")):
        uid = str(context["table"]["uid"])
        for question in context["questions"]:
            examples.append(_example(
                id=str(question["uid"]), question=question["question"], answer=question["answer"],
                doc_id=uid, evidence=[{"doc_id": uid}], scale=question.get("scale", ""),
                answer_type=question.get("answer_type", ""), answer_from=question.get("answer_from", ""),
                derivation=question.get("derivation", "")))
    return examples, [path]


# --- SciFact -------------------------------------------------------------------------------------
SCIFACT_CLAIMS = {"validation": "claims_validation.csv", "train": "claims_train.csv"}


def load_scifact(data: str | Path, claims: str = "validation") -> Loaded:
    """SciFact claims (question = the claim, answer = "": retrieval only; evidence = the cited abstracts).

    claims: "validation" (default; 300 claims, the labels BEIR uses as SciFact's test qrels) or
    "train" (809 claims). The zip's claims_test.csv has no labels and is not offered. The abstracts
    (a CSV in the zip) are written once as JSONL {"id", "title", "text"} under
    `cache_dir("datasets")/scifact/<zip sha256>/`, and that file is what gets ingested.
    """
    if claims not in SCIFACT_CLAIMS:
        raise ValueError(f"unknown SciFact claims {claims!r}; choose {', '.join(SCIFACT_CLAIMS)}")
    archive = _file_in(data, "scifact.zip")
    _require(archive, hint="point --data at the scifact folder or scifact.zip")
    corpus = _scifact_corpus(archive)
    examples: dict[str, dspy.Example] = {}
    with zipfile.ZipFile(archive) as bundle:
        for row in _csv_rows(bundle, SCIFACT_CLAIMS[claims]):  # one row per (claim, evidence abstract)
            if row["id"] not in examples:
                cited = row["cited_doc_ids"].strip("[] ").split()
                examples[row["id"]] = _example(id=row["id"], question=row["claim"], answer="",
                                               evidence=[{"doc_id": doc_id} for doc_id in cited])
    return list(examples.values()), [corpus]


def _scifact_corpus(archive: Path) -> Path:
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    target = cache_dir("datasets") / "scifact" / digest[:16] / "scifact_corpus.jsonl"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(archive) as bundle:
        lines = [json.dumps({"id": row["doc_id"], "title": row["title"],
                             "text": " ".join(_string_list(row["abstract"]))}, ensure_ascii=False)
                 for row in _csv_rows(bundle, "corpus_train.csv")]
    handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def _csv_rows(bundle: zipfile.ZipFile, name: str) -> list[dict[str, str]]:
    csv.field_size_limit(1 << 24)
    with bundle.open(name) as raw:
        return list(csv.DictReader(io.TextIOWrapper(raw, encoding="utf-8", newline="")))


def _string_list(value: str) -> list[str]:
    """The string literals of a printed list. SciFact's abstracts are numpy-printed, `['a.'\\n 'b.']`,
    without commas, so `ast.literal_eval` of the whole would glue the sentences together."""
    tokens = tokenize.generate_tokens(io.StringIO(value).readline)
    return [ast.literal_eval(token.string) for token in tokens if token.type == tokenize.STRING]


# --- users' own JSONL ----------------------------------------------------------------------------
class _Evidence(BaseModel):
    model_config = ConfigDict(extra="forbid")
    doc_id: str | None = None
    page: int | None = Field(default=None, ge=1)
    passage_id: str | None = None
    text: str | None = None

    @model_validator(mode="after")
    def _one_target(self) -> _Evidence:
        if not (self.doc_id or self.passage_id):
            raise ValueError("needs doc_id (with an optional 1-based page) or passage_id")
        if self.page is not None and self.passage_id:
            raise ValueError("give page or passage_id, not both")
        return self

    def label(self) -> dict:
        item: dict[str, Any] = {"doc_id": self.passage_id or self.doc_id}
        if self.page is not None:
            item["page"] = self.page
        if self.text:
            item["text"] = self.text
        return item


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str | int
    question: str = Field(min_length=1)
    answer: str | int | float | list = ""
    doc_id: str | None = None
    evidence: list[_Evidence] = []


def load_jsonl(path: str | Path) -> Loaded:
    """Users' own questions, one JSON object a line:
    {"id", "question", "answer", "evidence": [{"doc_id", "page"} | {"doc_id", "passage_id"}], "doc_id"?}.

    Pages are 1-based. A passage_id names a passage, which is its own document in the index, so it
    becomes evidence {"doc_id": passage_id}; {"doc_id"} alone means the whole document. Other fields
    are kept on the example. No files are returned: the documents must already be ingested into the
    index the questions are asked against. Bad input raises ValueError naming file, line and field.
    """
    path = Path(path)
    _require(path, hint="give the questions' .jsonl file")
    if not path.is_file():
        raise ValueError(f"{path} is a folder: give the questions' .jsonl file")
    examples = []
    for _, record in _records(path, _Record):
        fields = dict(record.model_extra or {}, id=str(record.id), question=record.question, answer=record.answer,
                      evidence=[item.label() for item in record.evidence])
        if record.doc_id:
            fields["doc_id"] = record.doc_id
        examples.append(_example(**fields))
    if not examples:
        raise ValueError(f"{path}: no questions found")
    return examples, []


def _records(path: Path, model: type[BaseModel]):
    """(line number, record) of each non-empty line of a JSONL file; a bad line or a duplicate id raises
    ValueError naming the file, the line and the field."""
    seen = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = model.model_validate_json(line)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = (f"field {'.'.join(str(part) for part in error['loc'])}: " if error["loc"] else "")
            raise ValueError(f"{path}, line {number}: {where}{error['msg']}") from None
        if str(record.id) in seen:
            raise ValueError(f"{path}, line {number}: field id: duplicate id {str(record.id)!r}")
        seen.add(str(record.id))
        yield number, record


class _ChatTurn(BaseModel):
    text: str = Field(min_length=1)
    question: str = Field(min_length=1)
    mentions: list[str] = []
    absent: list[str] = []
    new_topic: bool = False
    kind: Literal["question", "show_more", "export"] = "question"
    expected_status: Literal["answer", "clarify"] = "answer"
    answer: str | int | float | list = ""
    evidence: list[_Evidence] = []


class _Chat(BaseModel):
    id: str
    turns: list[_ChatTurn] = Field(min_length=1)


def load_sample(data: str | Path) -> Loaded:
    """The project's sample corpus (`data/sample`), or any folder laid out like it: `qa.jsonl` in the
    generic JSONL format, and one subfolder per bucket holding its documents and a `metadata.jsonl`.
    The bucket folders are the files to ingest (each as its bucket, with its metadata)."""
    root = Path(data)
    _require(root / "qa.jsonl", hint="the sample folder holds qa.jsonl and one folder per bucket")
    return load_jsonl(root / "qa.jsonl")[0], _bucket_folders(root)


def load_sample_chat(data: str | Path) -> Loaded:
    """The sample corpus's labeled conversations (`chat.jsonl`, see `data.sample_chat`), one example per
    turn in order: "question" is what the user typed, "standalone" the gold rewrite, "conversation"
    and "turn" place it (a split keeps a conversation's turns together)."""
    root = Path(data)
    path = root / "chat.jsonl"
    _require(path, hint="the sample folder holds chat.jsonl and one folder per bucket")
    examples = []
    for _, chat in _records(path, _Chat):
        for number, turn in enumerate(chat.turns, start=1):
            examples.append(_example(id=f"{chat.id}/{number}", conversation=chat.id, turn=number, question=turn.text,
                                     standalone=turn.question, mentions=turn.mentions, absent=turn.absent,
                                     new_topic=turn.new_topic, kind=turn.kind, expected_status=turn.expected_status,
                                     answer=turn.answer, evidence=[item.label() for item in turn.evidence]))
    if not examples:
        raise ValueError(f"{path}: no conversations found")
    return examples, _bucket_folders(root)


def _bucket_folders(root: Path) -> list[Path]:
    buckets = sorted(folder for folder in root.iterdir() if is_bucket_folder(folder))
    if not buckets:
        raise FileNotFoundError(f"no bucket folder (a folder with {BUCKET_METADATA}) in {root}")
    return buckets


DATASETS: dict[str, Callable[[str | Path], Loaded]] = {
    "financebench": load_financebench, "hotpotqa": load_hotpotqa, "tatqa": load_tatqa,
    "scifact": load_scifact, "sample": load_sample, "sample-chat": load_sample_chat, "jsonl": load_jsonl}


def load_dataset(name: str, data: str | Path) -> Loaded:
    """The named dataset read from `data` (its folder, or for "jsonl" the file)."""
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; known datasets: {', '.join(DATASETS)}")
    if not Path(data).exists():
        raise FileNotFoundError(f"{data} not found (the {name} data)")
    return DATASETS[name](data)


def prepare_index(files: list[Path], index: Path, progress: bool = False) -> None:
    """Ingest the dataset's files (users' own JSONL sets have none: their index must exist); a folder
    holding a metadata.jsonl is ingested as the bucket named after it (by the index's summaries' writer, an
    LM's too)."""
    folders = [path for path in files if is_bucket_folder(path)]
    rest = [path for path in files if path not in folders]
    reports = [ingest_bucket_folder(folder, index, progress=progress, summarizer=chunk_summarizer) for folder in folders]
    if rest:
        reports.append(ingest(rest, index, progress=progress, summarizer=chunk_summarizer))
    for report in reports:
        if report.errors and not report.ingested:
            raise ValueError(f"nothing could be ingested into {index}: {report.errors[0]}")


# --- splits --------------------------------------------------------------------------------------
def split_of(example_id: str, fractions: tuple[float, float, float] = FRACTIONS) -> str:
    """"train", "dev" or "test" for this id, by sha256 (stable across runs and machines)."""
    point = int(hashlib.sha256(str(example_id).encode("utf-8")).hexdigest()[:15], 16) / 16 ** 15
    edge = 0.0
    for name, fraction in zip(SPLITS, fractions):
        edge += fraction
        if point < edge:
            return name
    return SPLITS[-1]


def split(examples: list, name: str, fractions: tuple[float, float, float] = FRACTIONS) -> list:
    """The examples of one part ("train", "dev", "test"), or "all", in their original order. A
    conversation's turns go to one part together (by the conversation's id)."""
    if name == "all":
        return list(examples)
    if name not in SPLITS:
        raise ValueError(f"unknown split {name!r}; choose {', '.join(SPLITS)} or all")
    return [example for example in examples if split_of(example.get("conversation") or example.id, fractions) == name]


def split_ids(examples: list, name: str, fractions: tuple[float, float, float] = FRACTIONS) -> list[str]:
    """The ids of `split(examples, name, fractions)`, for a run to record what it used."""
    return [str(example.id) for example in split(examples, name, fractions)]
