"""Embedders: the protocol, its implementations, and the resolution chain of DESIGN §7.

``auto`` resolution: an Ollama embedding model when Ollama is reachable and has it → the ONNX
all-MiniLM-L6-v2 when its files are in the models folder → the built-in hashing embedder, which
needs nothing and works offline.  ``openai`` (an OpenAI-compatible server's ``/v1/embeddings``) is
only ever an explicit choice: such a server is not looked for.  Every vector Cairn stores records
the ``model_id`` of the embedder that made it, so switching models never mixes vector spaces.

All embedders return float32 arrays of shape ``(n, dim)`` whose rows have unit length (or are zero
for empty text), so cosine similarity is a dot product.
"""

from __future__ import annotations

import itertools
import logging
import math
import os
import re
import threading
import zlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from engine.ai.ollama import OllamaClient, OllamaStatus
from engine.ai.openai_compat import OpenAICompatClient
from engine.config import Settings
from engine.errors import EnvironmentProblem, ModelUnavailable

log = logging.getLogger(__name__)

Matrix = npt.NDArray[np.float32]

ONNX_HELP = (
    "Put model.onnx and tokenizer.json of sentence-transformers/all-MiniLM-L6-v2 in {folder}: "
    "online, download onnx/model.onnx and tokenizer.json from that repository on the Hugging Face "
    "hub; offline, run `make models`."
)


@runtime_checkable
class Embedder(Protocol):
    """Texts to unit vectors; ``model_id`` names the vector space (stored with each vector)."""

    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Embed ``texts``; returns a ``(len(texts), dim)`` float32 array of unit (or zero) rows."""
        ...


def normalise(matrix: npt.NDArray[Any]) -> Matrix:
    """L2-normalise rows, leaving zero rows at zero."""
    out = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalised: Matrix = (out / norms).astype(np.float32, copy=False)
    return normalised


# -- hashing ------------------------------------------------------------------------------------
_WORD = re.compile(r"\w+", re.UNICODE)
_STOP_WORDS = """
    a an the and or but if then so of to in on at by for with from as is are was were be been being
    am do does did have has had i me my we our you your he him his she her it its they them their
    this that these those there here what which who whom whose when where why how not no yes just
    very too also can could would should will shall may might must about into over under up down
    out off again once all any both each few more most other some such only own same than s t
"""
_STOP = frozenset(_STOP_WORDS.split())


def _stem(word: str) -> str:
    """A tiny suffix stripper so 'adopted'/'adopting'/'adopts' share hashing features."""
    for suffix in ("ingly", "edly", "ing", "ies", "ied", "ed", "es", "ly", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            stem = word[: -len(suffix)]
            return stem + "y" if suffix in ("ies", "ied") else stem
    return word


class HashingEmbedder:
    """Dependency-free feature-hashing embedder (unigrams, bigrams, character trigrams).

    It knows no synonyms, but it is deterministic, fast and private, so a fresh offline machine
    still gets useful lexical similarity.  Hashes use CRC32, not Python's salted ``hash()``, so
    vectors are stable across runs.
    """

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim
        self.model_id = f"hashing-v1-{dim}"
        # Per-word features (the word and its character trigrams) repeat across texts: cache them.  The cache
        # is bounded and holds only hashes of words already seen in this process.
        self._word_cache: dict[str, tuple[tuple[int, float], ...]] = {}

    def _hash(self, token: str, weight: float) -> tuple[int, float]:
        h = zlib.crc32(token.encode("utf-8"))
        return h % self.dim, weight if (h >> 31) & 1 else -weight

    def _word_features(self, word: str) -> tuple[tuple[int, float], ...]:
        cached = self._word_cache.get(word)
        if cached is not None:
            return cached
        feats = [self._hash("w:" + word, 1.0)]
        padded = f"<{word}>"
        if len(padded) > 4:
            feats.extend(self._hash("c:" + padded[i : i + 3], 0.25) for i in range(len(padded) - 2))
        result = tuple(feats)
        if len(self._word_cache) > 200_000:
            self._word_cache.clear()
        self._word_cache[word] = result
        return result

    def _features(self, text: str) -> dict[int, float]:
        feats: dict[int, float] = {}
        words = _WORD.findall(text.lower())
        content = [_stem(w) for w in words if w not in _STOP]
        for word in content:
            for index, value in self._word_features(word):
                feats[index] = feats.get(index, 0.0) + value
        for first, second in itertools.pairwise(content):
            index, value = self._hash(f"b:{first}_{second}", 0.5)
            feats[index] = feats.get(index, 0.0) + value
        return feats

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Embed ``texts`` by feature hashing with sublinear term weights."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for index, value in self._features(text).items():
                out[row, index] = math.copysign(math.log1p(abs(value)), value)
        return normalise(out)


# -- ONNX ---------------------------------------------------------------------------------------
#: A batch takes texts up to this many times its shortest one's token count (plus PAD_SLACK tokens): padding
#: costs as much compute as real tokens, and batching longer texts gains nothing on one inference thread.
PAD_TOLERANCE = 1.1
PAD_SLACK = 2


class OnnxEmbedder:
    """A sentence-transformers model exported to ONNX (all-MiniLM-L6-v2 by default), on onnxruntime.

    Mean pooling over the attention mask and L2 normalisation reproduce the original model's
    vectors.  Inputs are tokenized first and batched only with texts of near-equal token length, so
    almost nothing is padded (see :meth:`_sorted_batches`); a single text is not padded at all.

    Threads: each inference runs on the thread that asks for it (one intra-op thread, no spinning),
    and a list of texts is dealt out to a shared pool of workers (one per core).  The
    session's own thread pool helped neither case: a recall query (one short text, ~4 ms) gained
    little from splitting its small matrices, while the pool's threads kept spinning after every run
    and took the second core from the recall channels that start right after the query is embedded;
    parallel batches keep bulk embedding as fast as the pool made it.  ``InferenceSession.run`` is
    safe to call from several threads at once, so a query never waits behind a bulk batch either.
    """

    def __init__(self, folder: Path, *, batch_size: int = 64, max_tokens: int = 256, threads: int = 0) -> None:
        """``threads``: how many batches of a long list run at once (0: one per core)."""
        model_path, tokenizer_path = folder / "model.onnx", folder / "tokenizer.json"
        if not model_path.exists() or not tokenizer_path.exists():
            raise EnvironmentProblem(
                f"The ONNX embedding model is not in {folder}.", fix=ONNX_HELP.format(folder=folder)
            )
        # Imported late: loading onnxruntime costs time and memory only an ONNX user should pay.
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_length=max_tokens)
        self._tokenizer.no_padding()
        self._batch_size = batch_size
        self._workers = threads or os.cpu_count() or 1
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        probe = self._run(["probe"])
        self.dim = int(probe.shape[1])
        self.model_id = f"onnx:{folder.name}"

    def _run(self, texts: Sequence[str]) -> Matrix:
        # a query (one text) skips the batch machinery
        single = len(texts) == 1
        encodings = [self._tokenizer.encode(texts[0])] if single else self._tokenizer.encode_batch(list(texts))
        return self._infer(encodings)

    def _infer(self, encodings: Sequence[Any]) -> Matrix:
        """One inference over ``encodings``, padded to the longest of them."""
        width = max((len(e.ids) for e in encodings), default=1) or 1
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, enc in enumerate(encodings):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.attention_mask)] = enc.attention_mask
        feeds: dict[str, npt.NDArray[np.int64]] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return normalise(pooled)

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Embed ``texts`` in batches of near-equal token length, several at once when there are several."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if len(texts) == 1:
            return self._run(texts)
        return self._sorted_batches(texts, self._workers)

    def embed_in_background(self, texts: Sequence[str]) -> Matrix:
        """As :meth:`embed`, on one core fewer: re-embedding a whole vault runs for many minutes beside recalls,
        which must keep a core of their own (with both cores busy, recall p95 rose ~7x during a migration)."""
        if len(texts) <= 1:
            return self.embed(texts)
        return self._sorted_batches(texts, max(1, self._workers - 1))

    def _sorted_batches(self, texts: Sequence[str], workers: int) -> Matrix:
        """Tokenize everything, group texts whose token counts are within ~10 % of each other, run the groups.

        With one inference thread per batch, a batch gains nothing from its size but pays for its padding: every
        row costs as much as the longest (more, since attention grows with the square of the width).  On
        document spans (5–195 tokens) batches of 64 sorted by characters took 22.8 s for 1,265 spans, one text per
        run 16.7 s; near-equal-length groups keep that and still batch the many short texts together.  The
        groups are dealt out round-robin, so each worker gets a similar mix of short and long ones.
        """
        encodings = self._tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        groups: list[list[int]] = []
        for i in order:
            length = len(encodings[i].ids)
            if groups:
                group = groups[-1]
                first = len(encodings[group[0]].ids)
                if len(group) < self._batch_size and length <= first * PAD_TOLERANCE + PAD_SLACK:
                    group.append(i)
                    continue
            groups.append([i])
        out = np.zeros((len(texts), self.dim), dtype=np.float32)

        def run(mine: list[list[int]]) -> None:
            for group in mine:
                out[group] = self._infer([encodings[i] for i in group])

        if workers <= 1 or len(groups) == 1:
            run(groups)
        else:
            shares = [groups[w::workers] for w in range(workers)]
            list(self._bulk_pool().map(run, [share for share in shares if share]))  # list(): re-raise failures
        return out

    def _bulk_pool(self) -> ThreadPoolExecutor:
        """One pool of ``workers`` threads for every caller's batches.

        Uploads keep two documents in flight, and both may be embedding: with a pool per call that was four
        inference threads on two cores, ~15 % slower than two; a shared pool queues the second call's batches
        behind the first's instead.  Single texts (queries) still run on their caller's thread.
        """
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self._workers, thread_name_prefix="embed")
            return self._pool


# -- model servers ------------------------------------------------------------------------------
class EmbeddingServer(Protocol):
    """A model server's embedding call (Ollama's ``/api/embed``, or ``/v1/embeddings`` of an OpenAI-compatible one)."""

    def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order; raises :class:`ModelUnavailable`."""
        ...


class ServerEmbedder:
    """Embeddings from a model on a server, e.g. Ollama's ``nomic-embed-text``; ``model_id`` is ``<prefix>:<model>``.

    Blank texts are not sent: they get zero rows like every other embedder (Ollama would drop an empty input rather
    than embed it).
    """

    def __init__(
        self, server: EmbeddingServer, model: str, *, prefix: str, batch_size: int = 64, dim: int | None = None
    ) -> None:
        """Probe the model for its dimension, unless ``dim`` is known (a vault's recorded space whose server is down
        now: calls fail until it is back)."""
        self._server = server
        self._model = model
        self._batch_size = batch_size
        self.model_id = f"{prefix}:{model}"
        if dim is not None:
            self.dim = dim
            return
        first = server.embed(model, ["probe"])
        if not first or not first[0]:
            raise ModelUnavailable(f"The model {model} returned no embedding.", fix="Choose an embedding model.")
        self.dim = len(first[0])

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Embed ``texts`` through the server in batches.

        Raises:
            ModelUnavailable: the server failed, or answered with vectors of another length than the first one
                (the model behind the name changed), which must not enter the index.
        """
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        rows = [i for i, text in enumerate(texts) if text.strip()]
        for start in range(0, len(rows), self._batch_size):
            batch = rows[start : start + self._batch_size]
            vectors = self._server.embed(self._model, [texts[i] for i in batch])
            if any(len(v) != self.dim for v in vectors):
                raise ModelUnavailable(
                    f"The model {self._model} now returns vectors of a different length than {self.dim}.",
                    fix="Restart Cairn so it re-embeds with the model as it is now installed.",
                )
            out[batch] = np.asarray(vectors, dtype=np.float32)
        return normalise(out)


class OllamaEmbedder(ServerEmbedder):
    """An Ollama embedding model (``/api/embed``); ``model_id`` ``ollama:<model>``."""

    def __init__(self, client: OllamaClient, model: str, *, batch_size: int = 64, dim: int | None = None) -> None:
        super().__init__(client, model, prefix="ollama", batch_size=batch_size, dim=dim)


class OpenAIEmbedder(ServerEmbedder):
    """An embedding model on an OpenAI-compatible server (``/v1/embeddings``); ``model_id`` ``openai:<model>``."""

    def __init__(self, client: OpenAICompatClient, model: str, *, batch_size: int = 64, dim: int | None = None) -> None:
        super().__init__(client, model, prefix="openai", batch_size=batch_size, dim=dim)


# -- resolution ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class EmbedderChoice:
    """The embedder in use and why (shown by ``cairn doctor`` and the GUI)."""

    embedder: Embedder
    reason: str
    warnings: tuple[str, ...] = ()


def resolve_embedder(
    settings: Settings,
    models_folder: Path,
    *,
    ollama: OllamaClient | None = None,
    status: OllamaStatus | None = None,
    openai_client: OpenAICompatClient | None = None,
) -> EmbedderChoice:
    """Pick the embedder per ``settings.embedder.provider`` with the auto chain of DESIGN §7.

    An explicitly chosen provider that cannot be used is an error with a fix; ``auto`` falls
    through and records why each earlier choice was skipped.
    """
    cfg = settings.embedder
    warnings: list[str] = []
    if cfg.provider == "openai":
        if openai_client is None:
            raise ModelUnavailable(
                f"embedder.provider is 'openai' but no client was given for {cfg.openai_model}.",
                fix="Set llm.openai_base_url to your server, or set embedder.provider = 'auto'.",
            )
        try:
            served: ServerEmbedder = OpenAIEmbedder(openai_client, cfg.openai_model, batch_size=cfg.batch_size)
        except ModelUnavailable as exc:
            raise ModelUnavailable(
                f"The embedding model {cfg.openai_model} at {openai_client.base_url} cannot be used: {exc.message}",
                fix=exc.fix or "Start the server with the model loaded, or set embedder.provider = 'auto'.",
            ) from exc
        return EmbedderChoice(served, f"{cfg.openai_model} at {openai_client.base_url}")
    if cfg.provider == "ollama" and ollama is None:
        # Without this, an explicit "ollama" silently ended up on the hashing embedder.
        raise ModelUnavailable(
            f"embedder.provider is 'ollama' but no Ollama client was given for {cfg.ollama_model}.",
            fix="Set llm.ollama_host to your Ollama server, or set embedder.provider = 'auto'.",
        )
    if cfg.provider in ("auto", "ollama") and ollama is not None:
        probe = status or ollama.probe()
        if probe.reachable and probe.has_model(cfg.ollama_model):
            try:
                emb = OllamaEmbedder(ollama, cfg.ollama_model, batch_size=cfg.batch_size)
                return EmbedderChoice(emb, f"Ollama model {cfg.ollama_model}", tuple(warnings))
            except ModelUnavailable as exc:
                if cfg.provider == "ollama":
                    raise
                warnings.append(f"Ollama embedder skipped: {exc}")
        elif cfg.provider == "ollama":
            raise ModelUnavailable(
                f"Ollama embedding model {cfg.ollama_model} is not available at {probe.host}"
                f" ({probe.error or 'model not installed'}).",
                fix=f"Start Ollama and run `ollama pull {cfg.ollama_model}`, or set embedder.provider = 'auto'.",
            )
        else:
            missing = f"model {cfg.ollama_model} missing"
            warnings.append(f"Ollama embedder skipped: {probe.error or missing}")
    if cfg.provider in ("auto", "onnx"):
        folder = models_folder / cfg.onnx_model
        if (folder / "model.onnx").exists():
            try:
                return EmbedderChoice(
                    OnnxEmbedder(folder, batch_size=cfg.batch_size),
                    f"ONNX model in {folder}",
                    tuple(warnings),
                )
            except Exception as exc:
                if cfg.provider == "onnx":
                    raise EnvironmentProblem(
                        f"The ONNX model in {folder} could not be loaded: {exc}",
                        fix=ONNX_HELP.format(folder=folder),
                    ) from exc
                warnings.append(f"ONNX embedder skipped: {exc}")
        elif cfg.provider == "onnx":
            raise EnvironmentProblem(f"No ONNX model in {folder}.", fix=ONNX_HELP.format(folder=folder))
        else:
            warnings.append(f"ONNX embedder skipped: no model files in {folder}")
    return EmbedderChoice(HashingEmbedder(cfg.hashing_dim), "built-in hashing embedder", tuple(warnings))


def embedder_for(
    model_id: str,
    dim: int,
    models_folder: Path,
    *,
    ollama: OllamaClient | None = None,
    openai_client: OpenAICompatClient | None = None,
    batch_size: int = 64,
) -> Embedder | None:
    """The embedder that made a recorded vector space (``model_id`` as stored), without probing a server; None when
    it cannot be made here (an ONNX model whose files are gone, a server's model without a client for it)."""
    if model_id.startswith("hashing-v1-"):
        return HashingEmbedder(dim)
    if model_id.startswith("onnx:"):
        folder = models_folder / model_id.removeprefix("onnx:")
        if not (folder / "model.onnx").exists():
            return None
        try:
            return OnnxEmbedder(folder, batch_size=batch_size)
        except Exception as exc:
            log.warning("the ONNX model in %s could not be loaded: %s", folder, exc)
            return None
    if model_id.startswith("ollama:") and ollama is not None:
        return OllamaEmbedder(ollama, model_id.removeprefix("ollama:"), batch_size=batch_size, dim=dim)
    if model_id.startswith("openai:") and openai_client is not None:
        return OpenAIEmbedder(openai_client, model_id.removeprefix("openai:"), batch_size=batch_size, dim=dim)
    return None
