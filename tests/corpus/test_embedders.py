"""The embedders shipped with ferret: all-MiniLM-L6-v2 through OpenVINO and through torch give the same
vectors, its 8-bit quantization (the default) nearly the same and the same ranking, each model is converted
once and then loaded, an index keeps its embedder."""
from __future__ import annotations

import numpy as np
import pytest

from ferret.corpus import dense
from ferret.corpus.dense import (DEFAULT_EMBEDDER, Int8MiniLMEmbedder, MiniLMEmbedder, OpenVINOMiniLMEmbedder, calibration_texts,
                                 embedder_name, get_embedder)
from ferret.corpus.ingest import ingest
from ferret.corpus.store import Store

TEXTS = ["Total current liabilities were $3,706 million.", "Liquidity and capital resources",
         "The Lakota and Dakota Sioux", "x" * 3000]  # the last one past the 256-token window


def test_openvino_and_torch_give_the_same_unit_vectors():
    fast, reference = get_embedder("minilm-openvino"), get_embedder("minilm")
    assert isinstance(fast, OpenVINOMiniLMEmbedder) and isinstance(reference, MiniLMEmbedder)
    vectors, expected = fast(TEXTS), reference(TEXTS)
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    assert (vectors * expected).sum(axis=1).min() > 0.999
    assert fast([]).shape == (0, 384)
    # rank order of a query against the texts is the same
    assert np.array_equal(np.argsort(-(vectors @ fast(["liabilities"])[0])), np.argsort(-(expected @ reference(["liabilities"])[0])))


def test_the_int8_model_gives_nearly_the_same_vectors_and_the_same_ranking():
    int8, unquantized = get_embedder(), get_embedder("minilm-openvino")
    assert isinstance(int8, Int8MiniLMEmbedder)
    texts = TEXTS + ["Net cash provided by operating activities", "The notice period is 30 days.",
                     "Revenue from the Consumer segment grew 12%."]
    vectors, expected = int8(texts), unquantized(texts)
    assert vectors.shape == (7, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    cosines = (vectors * expected).sum(axis=1)
    assert cosines.min() > 0.97 and cosines.mean() > 0.99
    for query in ("liabilities", "how long is the notice period", "segment revenue growth"):
        ranked = np.argsort(-(vectors @ int8([query])[0]))
        assert np.array_equal(ranked[:3], np.argsort(-(expected @ unquantized([query])[0]))[:3])


def test_an_int8_vector_does_not_move_with_its_batch():
    # in bf16 (OpenVINO's default where the CPU has AMX) this text's vector was at cosine 0.86 to the
    # unquantized one alone, 0.997 when a longer text padded its batch
    text = ("IN WITNESS WHEREOF, the parties hereto have caused this Supplemental Indenture to be duly executed "
            "as of the day and year first above written.")
    int8, unquantized = get_embedder(), get_embedder("minilm-openvino")
    alone, padded = int8([text])[0], int8([text, " ".join(["revenue grew in the quarter"] * 10)])[0]
    expected = unquantized([text])[0]
    assert alone @ padded > 0.999 and alone @ expected > 0.98


def test_the_int8_model_is_quantized_once_from_the_packaged_sample(monkeypatch):
    texts = calibration_texts()
    assert len(texts) > 300 and texts == calibration_texts() and all(len(text.split()) >= 4 for text in texts)
    first = get_embedder("minilm-int8")
    import nncf

    monkeypatch.setattr(nncf, "quantize", lambda *a, **k: pytest.fail("quantized again"))
    again = Int8MiniLMEmbedder()
    assert np.array_equal(first(TEXTS[:2]), again(TEXTS[:2]))
    assert again.model.get_property("ENABLE_CPU_PINNING") is False
    files = dense._calibration_files()
    monkeypatch.setattr(dense, "_calibration_files", lambda: files[:1])  # other calibration texts: another model
    with pytest.raises(pytest.fail.Exception, match="quantized again"):
        Int8MiniLMEmbedder()


def test_the_converted_model_is_saved_once_and_loaded_after(tmp_path, monkeypatch):
    monkeypatch.setenv("FERRET_CACHE", str(tmp_path))
    first = OpenVINOMiniLMEmbedder()
    saved = sorted(p.name for p in (tmp_path / "embedders").iterdir())
    assert len(saved) == 2 and saved[0].endswith(".bin") and saved[1].endswith(".xml")  # no partial file left

    import openvino

    monkeypatch.setattr(openvino, "convert_model", lambda *a, **k: pytest.fail("converted again"))
    again = OpenVINOMiniLMEmbedder()
    assert np.allclose(first(TEXTS[:2]), again(TEXTS[:2]))
    assert again.model.get_property("ENABLE_CPU_PINNING") is False  # two workers' threads are not put on one core


def test_an_index_keeps_the_embedder_it_was_built_with(tmp_path):
    (tmp_path / "a.md").write_text("# Notes\n\nRevenue grew.\n")
    (tmp_path / "b.md").write_text("# More\n\nCosts fell.\n")
    ingest([tmp_path / "a.md"], tmp_path / "torch", embedder="minilm")
    ingest([tmp_path / "b.md"], tmp_path / "torch")  # no --embedder: the index's own
    store = Store(tmp_path / "torch")
    assert store.meta("embedder_spec") == "minilm"
    assert {row[0] for row in store.conn.execute("SELECT DISTINCT model FROM embeddings")} == {"all-MiniLM-L6-v2"}
    ingest([tmp_path / "a.md"], tmp_path / "default")
    assert Store(tmp_path / "default").meta("embedder_spec") == DEFAULT_EMBEDDER == "minilm-int8"
    assert embedder_name(None) == "all-MiniLM-L6-v2-openvino-int8-f32" and embedder_name("openai/x") == "openai/x"
    with pytest.raises(ValueError, match="was built with embedder 'minilm', not 'minilm-int8'"):
        ingest([tmp_path / "b.md"], tmp_path / "torch", embedder="minilm-int8")
    assert dense._LOCAL["minilm"] is MiniLMEmbedder
