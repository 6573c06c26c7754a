"""Embedders: the hashing fallback, the ONNX runner (on a tiny real ONNX model built here), and resolution."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine.ai.embedders import HashingEmbedder, OnnxEmbedder, resolve_embedder
from engine.config import Settings
from engine.errors import EnvironmentProblem


def test_hashing_embedder_is_deterministic_unit_and_lexically_sensible() -> None:
    emb = HashingEmbedder(256)
    texts = ["Caroline adopted a dog", "caroline adopts dogs", "quarterly tax filing deadline", ""]
    first, second = emb.embed(texts), HashingEmbedder(256).embed(texts)
    assert first.shape == (4, 256) and first.dtype == np.float32
    assert np.array_equal(first, second), "stable across instances (no salted hash())"
    norms = np.linalg.norm(first, axis=1)
    assert np.allclose(norms[:3], 1.0, atol=1e-5) and norms[3] == 0.0
    sims = first @ first[0]
    assert sims[1] > 0.8 > 0.3 > sims[2]
    assert emb.model_id == "hashing-v1-256"


def build_tiny_onnx_model(folder: Path, dim: int = 8) -> list[str]:
    """A real ONNX graph (embedding lookup → last_hidden_state) and a WordLevel tokenizer, like a tiny MiniLM."""
    import onnx
    from onnx import TensorProto, helper
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = ["[PAD]", "[UNK]", "cat", "dog", "tax", "deadline", "the", "a", "sat", "probe"]
    vocab = {w: i for i, w in enumerate(words)}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(folder / "tokenizer.json"))
    rng = np.random.default_rng(7)
    table = rng.normal(size=(len(words), dim)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"], axis=0)],
        "tiny",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", dim])],
        initializer=[helper.make_tensor("table", TensorProto.FLOAT, table.shape, table.flatten().tolist())],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(folder / "model.onnx"))
    np.save(folder / "table.npy", table)
    return words


def test_onnx_embedder_mean_pools_and_normalises(tmp_path: Path) -> None:
    folder = tmp_path / "tiny-model"
    words = build_tiny_onnx_model(folder)
    table = np.load(folder / "table.npy")
    emb = OnnxEmbedder(folder, batch_size=2)
    assert emb.dim == 8 and emb.model_id == "onnx:tiny-model"
    texts = ["cat sat", "dog", "the tax deadline", "cat sat"]
    out = emb.embed(texts)
    assert out.shape == (4, 8)
    # expected: mean of the token rows, L2-normalised — batches of different widths must not change the result
    for text, row in zip(texts, out, strict=True):
        ids = [words.index(w) for w in text.split()]
        expected = table[ids].mean(axis=0)
        expected /= np.linalg.norm(expected)
        assert np.allclose(row, expected, atol=1e-5)
    assert np.allclose(out[0], out[3])
    assert emb.embed([]).shape == (0, 8)


def test_onnx_embedder_runs_batches_side_by_side_with_the_same_result(tmp_path: Path) -> None:
    """Long lists run batch by batch on several threads, and callers may embed at once (no lock between them)."""
    folder = tmp_path / "tiny-model"
    words = build_tiny_onnx_model(folder)
    texts = [" ".join(words[2 + (i + j) % 8] for j in range(1 + i % 5)) for i in range(41)]
    serial = OnnxEmbedder(folder, batch_size=4, threads=1)
    parallel = OnnxEmbedder(folder, batch_size=4, threads=3)
    expected = np.vstack([serial.embed([t]) for t in texts])
    assert np.allclose(serial.embed(texts), expected, atol=1e-6)
    assert np.allclose(parallel.embed(texts), expected, atol=1e-6)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _n: parallel.embed(texts), range(4)))
    assert all(np.allclose(r, expected, atol=1e-6) for r in results)
    # background work (a re-embedding) leaves a core to the recalls running beside it, with the same vectors
    threads: set[str] = set()
    original = parallel._infer

    def spy(encodings: Any) -> Any:
        threads.add(threading.current_thread().name)
        return original(encodings)

    parallel._infer = spy  # type: ignore[method-assign]
    assert np.allclose(parallel.embed_in_background(texts), expected, atol=1e-6)
    assert 1 <= len(threads) <= 2  # three workers, one fewer for background work


def test_onnx_embedder_without_files_says_how_to_get_them(tmp_path: Path) -> None:
    with pytest.raises(EnvironmentProblem) as info:
        OnnxEmbedder(tmp_path / "missing")
    assert "make models" in info.value.fix and "tokenizer.json" in info.value.fix


def test_auto_resolution_prefers_onnx_files_over_hashing(tmp_path: Path) -> None:
    settings = Settings().updated({"embedder.onnx_model": "tiny-model"})
    choice = resolve_embedder(settings, tmp_path)
    assert isinstance(choice.embedder, HashingEmbedder)
    assert any("no model files" in w for w in choice.warnings)
    build_tiny_onnx_model(tmp_path / "tiny-model")
    choice = resolve_embedder(settings, tmp_path)
    assert isinstance(choice.embedder, OnnxEmbedder)


def test_explicit_onnx_without_files_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(EnvironmentProblem, match="No ONNX model"):
        resolve_embedder(Settings().updated({"embedder.provider": "onnx"}), tmp_path)


def test_onnx_batches_hold_texts_of_near_equal_token_length(tmp_path: Path) -> None:
    """Padding costs as much as real tokens: a batch's rows are within ~10 % (+2 tokens) of its shortest one."""
    folder = tmp_path / "tiny-model"
    words = build_tiny_onnx_model(folder)
    texts = [" ".join(words[2 + (i + j) % 8] for j in range(1 + (i * 7) % 23)) for i in range(120)]
    emb = OnnxEmbedder(folder, batch_size=16, threads=2)
    seen: list[list[int]] = []
    infer = emb._infer

    def recording(encodings):  # type: ignore[no-untyped-def]
        seen.append([len(e.ids) for e in encodings])
        return infer(encodings)

    emb._infer = recording  # type: ignore[method-assign]
    out = emb.embed(texts)
    expected = np.vstack([emb._run([t]) for t in texts])
    assert np.allclose(out, expected, atol=1e-6)
    batches = seen[: len(seen) - len(texts)]  # the single-text runs above come last
    assert sum(len(b) for b in batches) == len(texts)
    assert all(len(b) <= 16 and max(b) <= min(b) * 1.1 + 2 for b in batches)
    assert any(len(b) > 1 for b in batches), "equal lengths still share a run"
