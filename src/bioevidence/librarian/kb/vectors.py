"""Dense vectors for a local index: chunk every document, encode the chunks in batches, write
``<index>/dense/``.

Encoding runs through :func:`bioevidence.execute.map_batches` (serial here, forked with
``workers``, or on Dask workers with ``scheduler``: each worker loads the model once through
:class:`EncoderRecipe`). Vectors are cached per document under ``cache`` by a content key (model,
chunker version and the chunks' text), written as each batch comes back: an interrupted build
resumes where it stopped, and a document already encoded (in this index, an earlier build or
another knowledge base sharing the cache) is never encoded again.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import ClusterError
from ...execute import BatchFailed, map_batches
from ..dense import DEFAULT_MODEL, DenseIndex
from ..index import LocalIndex
from .chunks import CHUNK_VERSION, Chunk, chunk_passages

__all__ = ["DenseStats", "EncoderRecipe", "build_dense", "index_chunks"]

DOCS_PER_BATCH = 8  # a full-text paper is ~25 chunks: ~200 chunks a batch, resumable every few seconds


@dataclass(frozen=True)
class DenseStats:
    docs: int
    chunks: int
    encoded: int  # chunks encoded by this run (the rest came from the cache)
    seconds: float

    @property
    def chunks_per_s(self) -> float:
        return self.encoded / self.seconds if self.seconds else 0.0


@dataclass(frozen=True)
class EncoderRecipe:
    model: str = DEFAULT_MODEL

    @property
    def key(self) -> str:
        return f"encoder:{self.model}"

    def load(self) -> Any:
        from ..dense import load_encoder

        return load_encoder(self.model)


def _encode(encoder: Any, batch: Sequence[tuple[str, list[str]]]) -> list[Any]:
    """The task: encode every document's chunk texts (one call, so batches stay full)."""
    texts = [t for _, texts in batch for t in texts]
    matrix = encoder.encode(texts)
    out, pos = [], 0
    for _, doc_texts in batch:
        out.append(matrix[pos:pos + len(doc_texts)])
        pos += len(doc_texts)
    return out


def index_chunks(index: LocalIndex) -> list[list[Chunk]]:
    """The chunks of every document of ``index``, by document number."""
    return [chunk_passages(d.idx, index.passages(d.idx), title=d.title) for d in index.docs]


def embed_text(title: str, chunk: Chunk) -> str:
    """What is encoded: the title, then the chunk (the title places a paragraph in its paper)."""
    return chunk.text if not chunk.pieces else f"{title}. {chunk.text}" if title else chunk.text


def _key(model: str, texts: list[str]) -> str:
    h = hashlib.sha256(f"{model}\0{CHUNK_VERSION}".encode())
    for t in texts:
        h.update(b"\0" + t.encode())
    return h.hexdigest()


def build_dense(index_dir: Path | str, *, cache: Path | str | None = None, model: str = DEFAULT_MODEL,
                scheduler: Any = None, workers: int = 1, progress: Callable[[int, int], None] | None = None
                ) -> DenseStats:
    """Write ``<index_dir>/dense/`` for the index in ``index_dir`` (see module docstring).
    ``progress(chunks done, chunks in all)`` after each batch."""
    import numpy as np

    start = time.perf_counter()
    index = LocalIndex(index_dir)
    cache_dir = Path(cache) if cache is not None else Path(index_dir) / "dense-cache"
    cache_dir.mkdir(parents=True, exist_ok=True)
    per_doc = index_chunks(index)
    texts = [[embed_text(index.docs[i].title, c) for c in chunks] for i, chunks in enumerate(per_doc)]
    keys = [_key(model, t) for t in texts]
    vectors: dict[int, Any] = {}
    todo: list[tuple[str, list[str]]] = []
    todo_docs: list[int] = []
    for i, key in enumerate(keys):
        path = cache_dir / f"{key}.npy"
        if path.is_file():
            try:
                vectors[i] = np.load(path)
                continue
            except (OSError, ValueError):
                path.unlink(missing_ok=True)  # a torn file from a crash: encode again
        if texts[i]:
            todo.append((key, texts[i]))
            todo_docs.append(i)
    total = sum(len(t) for t in texts)
    done = total - sum(len(t) for _, t in todo)
    if progress is not None:
        progress(done, total)
    pos = 0
    for batch, result in map_batches(_encode, EncoderRecipe(model), todo, scheduler=scheduler, workers=workers,
                                     base=DOCS_PER_BATCH):
        if isinstance(result, BatchFailed):
            raise result.error or ClusterError(f"{result.message}; the vectors were not written")
        for (key, doc_texts), matrix in zip(batch, result, strict=True):
            i = todo_docs[pos]
            pos += 1
            vectors[i] = matrix
            tmp = cache_dir / f"{key}.npy.tmp"
            with tmp.open("wb") as fh:
                np.save(fh, np.asarray(matrix, dtype=np.float32))
            tmp.replace(cache_dir / f"{key}.npy")
            done += len(doc_texts)
        if progress is not None:
            progress(done, total)
    units: list[Any] = []
    rows: list[Any] = []
    for i, chunks in enumerate(per_doc):
        for c, vec in zip(chunks, vectors.get(i, []), strict=True):
            units.append(c.unit())
            rows.append(vec)
    matrix = np.vstack(rows) if rows else np.zeros((0, 384), dtype=np.float32)
    DenseIndex.write(Path(index_dir) / "dense", matrix, units, model=model)
    index.close()
    encoded = sum(len(t) for _, t in todo)
    return DenseStats(index.n, len(units), encoded, time.perf_counter() - start)
