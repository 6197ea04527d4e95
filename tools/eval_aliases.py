"""How often the offline planner reads an ordinary word as a gene, and how often a real gene alias
still is one (issue 28, item 1).

    .venv/bin/python tools/eval_aliases.py [--data ../shared/data] [--show 15] [--markdown]

``--markdown`` prints the rates as docs/librarian.md states them (the table ``tools/reproduce.py aliases``
checks; the SciFact rate with the corpus readings, the one held to the target, in bold) in place of the
wider table with the share of listed tokens.

Two question sets, both written by script (none picked by hand):

* **CIViC**: one question per row of ``claims/civic/civic.biomarkers.tsv`` (the 2016 export),
  written from its gene, variant, disease, drugs, evidence type and significance by
  ``tools/civic_questions.py::question_for`` ("Does BRAF V600E confer sensitivity to vemurafenib
  in melanoma?"), distinct questions only. Gene tokens: the row's gene symbol and the HGNC-listed
  words of its variant (a fusion partner); every other token is a non-gene token. **Alias recall**:
  each question rewritten with each previous symbol or alias HGNC lists for the row's gene in
  place of its symbol (one rewrite per alias): is the alias read as that gene?
* **SciFact**: every sentence of the 5,183 abstracts of ``claims/scifact/corpus.jsonl.gz``, asked
  as it is. Gene tokens: approved HGNC symbols, and aliases the same abstract defines (Schwartz &
  Hearst) as that gene. Every other token is a non-gene token, so an alias used as the gene
  without a definition counts against the planner: the rate is an upper bound.

Rows: "before" is the rule of the previous release (any HGNC-listed token but a few clinical
abbreviations is a gene; hyphenated words split); "static" is the gate without corpus readings;
"+ corpus" adds the readings mined from an index's corpus (CIViC: the pinned CIViC corpus; SciFact:
the *other* half of the abstracts by doc id parity, so no sentence is judged by its own definition).
The rate is non-gene tokens read as a gene over all non-gene tokens (target <= 1%), and over the
non-gene tokens HGNC lists (the only ones that can be misread).
"""

from __future__ import annotations

import argparse
import collections
import csv
import gzip
import io
import json
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from civic_questions import _drugs, question_for

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9]")
Readings = Callable[[str], Mapping[str, int]] | None


@dataclass
class Tally:
    tokens: int = 0  # non-gene tokens
    listed: int = 0  # of them, HGNC-listed (symbol, previous symbol or alias)
    expanded: int = 0  # of them, read as a gene
    words: collections.Counter[str] = field(default_factory=collections.Counter)  # what was misread

    def rate(self) -> float:
        return self.expanded / self.tokens if self.tokens else 0.0

    def listed_rate(self) -> float:
        return self.expanded / self.listed if self.listed else 0.0


_LEGACY: dict[Path, dict[str, str]] = {}


def legacy_map(data: Path) -> dict[str, str]:
    """Token -> gene symbol as the lexicon before issue 28 read HGNC: approved symbols, then each
    previous symbol or alias for the first gene that lists it (file order), bar a few clinical
    abbreviations."""
    if data not in _LEGACY:
        from bioevidence.librarian.alias_gate import NOT_GENE_ALIASES
        from bioevidence.librarian.lexicon import HGNC_FILE, _inflate

        text = _inflate(data / "references" / HGNC_FILE)
        rows = [r for r in csv.DictReader(io.StringIO(text), delimiter="\t") if r.get("status") == "Approved"]
        out: dict[str, str] = {}
        for r in rows:
            for s in (*(r.get("prev_symbol") or "").split("|"), *(r.get("alias_symbol") or "").split("|")):
                if s and s.upper() not in NOT_GENE_ALIASES:
                    out.setdefault(s, r["symbol"])
        out.update({r["symbol"]: r["symbol"] for r in rows})
        _LEGACY[data] = out
    return _LEGACY[data]


def legacy_genes(data: Path, question: str) -> dict[str, str]:
    """The rule before issue 28: token (and each part of a hyphenated one) -> gene symbol."""
    from bioevidence.librarian.lexicon import _AMBIGUOUS

    genes = legacy_map(data)
    out: dict[str, str] = {}
    raw = re.findall(r"[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9]", question)
    for tok in dict.fromkeys(t for whole in raw for t in (whole, *whole.split("-"))):
        if tok in _AMBIGUOUS or not (tok.isupper() or any(c.isdigit() for c in tok)) or len(tok) < 3:
            continue
        if tok in genes and any(c.isalpha() for c in tok):
            out[tok] = genes[tok]
    return out


def gated_genes(lexicon: Any, question: str, readings: Readings) -> dict[str, str]:
    """Today's rule: token as written -> gene symbol, for the tokens read as genes."""
    return {m.token: m.entity.label for m in lexicon.gene_mentions(question, readings) if m.gene}


def score(lexicon: Any, question: str, gene_tokens: set[str], read: dict[str, str], tally: Tally) -> None:
    """Count ``question``'s non-gene tokens and those ``read`` as genes."""
    for tok in dict.fromkeys(_TOKEN.findall(question)):
        parts = {tok, tok.replace("-", ""), *tok.split("-")}
        if parts & gene_tokens:
            continue
        tally.tokens += 1
        if any(p in lexicon.genes for p in parts):
            tally.listed += 1
        hit = [p for p in (tok, *tok.split("-")) if p in read]
        if hit:
            tally.expanded += 1
            tally.words[f"{hit[0]}→{read[hit[0]]}"] += 1


def civic_rows(data: Path) -> list[dict[str, str]]:
    with (data / "claims" / "civic" / "civic.biomarkers.tsv").open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def civic_questions(data: Path) -> list[tuple[str, str, str]]:
    """``(question, gene symbol, variant)``: one per distinct question the 2016 export asks."""
    out: dict[str, tuple[str, str, str]] = {}
    for r in civic_rows(data):
        q = question_for(r["evidence_type"], r["clinical_significance"], f"{r['genesymbol']} {r['variant_name']}",
                         r["disease_name"], _drugs(r["drug_names"], r["drug_interaction_type"]))
        if q:
            out.setdefault(q, (q, r["genesymbol"], r["variant_name"]))
    return list(out.values())


def civic_gene_tokens(lexicon: Any, question: str, symbol: str, variant: str) -> set[str]:
    """The row's gene, the HGNC-listed words of its variant (a fusion partner), approved symbols
    anywhere, and HGNC-listed whole words naming a drug's target ("PD-1 Inhibitor", "Anti-CD33")."""
    words = _TOKEN.findall(question)
    return {symbol, *(t for t in re.findall(r"[A-Za-z0-9]+", variant) if t in lexicon.genes),
            *(t for t in words if t in lexicon.approved or t.replace("-", "") in lexicon.approved),
            *(t for t in words if t in lexicon.genes and re.search(rf"\b{re.escape(t)}\b(?: [A-Za-z]+)? [Ii]nhibitor|"
                                                              rf"[Aa]nti-{re.escape(t)}\b", question))}


def aliases_of(lexicon: Any, symbol: str) -> list[str]:
    """The previous symbols and aliases HGNC lists for ``symbol`` that the lexicon maps to it."""
    ent = lexicon.genes.get(symbol)
    if ent is None:
        return []
    return [s for s in ent.synonyms[1:] if s in lexicon.genes and lexicon.genes[s].id == ent.id
            and s not in lexicon.approved and _TOKEN.fullmatch(s) and len(s) >= 3
            and (s.isupper() or any(c.isdigit() for c in s))]


def civic_figures(lexicon: Any, data: Path, readings: Readings) -> dict[str, Any]:
    """False expansions (before, gated) and alias recall (before, gated) on the CIViC questions."""
    before, after = Tally(), Tally()
    recall = collections.Counter[str]()
    missed = collections.Counter[str]()
    questions = civic_questions(data)
    for q, symbol, variant in questions:
        genes = civic_gene_tokens(lexicon, q, symbol, variant)
        score(lexicon, q, genes, legacy_genes(data, q), before)
        score(lexicon, q, genes, gated_genes(lexicon, q, readings), after)
    seen: set[tuple[str, str]] = set()
    for q, symbol, _ in questions:
        for alias in aliases_of(lexicon, symbol):
            rewritten = re.sub(rf"\b{re.escape(symbol)}\b", alias, q, count=1)
            if rewritten == q or (rewritten, alias) in seen:
                continue
            seen.add((rewritten, alias))
            recall["total"] += 1
            if legacy_genes(data, rewritten).get(alias) == symbol:
                recall["before"] += 1
            mention = next((m for m in lexicon.gene_mentions(rewritten, readings) if m.token == alias), None)
            if mention is not None and mention.gene and mention.entity.label == symbol:
                recall["after"] += 1
            else:
                missed[f"{alias}→{symbol}: {mention.reason if mention else 'not a token'}"] += 1
    return {"questions": len(questions), "before": before, "after": after, "recall": recall, "missed": missed}


def scifact_docs(data: Path) -> list[dict[str, Any]]:
    with gzip.open(data / "claims" / "scifact" / "corpus.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def mined(docs: Iterable[dict[str, Any]]) -> Any:
    from bioevidence.librarian.abbreviations import Synonyms, mine

    return Synonyms.of(mine(d["abstract"] for d in docs))


def scifact_figures(lexicon: Any, data: Path, corpus: bool, step: int = 1) -> dict[str, Any]:
    """False expansions (before, gated) on every SciFact sentence (of every ``step``-th abstract);
    with ``corpus``, readings from the other half of the abstracts."""
    from bioevidence.librarian.abbreviations import Synonyms, mine
    from bioevidence.librarian.alias_gate import names_gene

    docs = scifact_docs(data)
    halves = {0: mined(d for d in docs if d["doc_id"] % 2 == 0), 1: mined(d for d in docs if d["doc_id"] % 2)}
    before, after = Tally(), Tally()
    sentences = 0
    for d in docs[::step]:
        own = Synonyms.of(mine([d["abstract"]]))
        readings = halves[1 - d["doc_id"] % 2].readings if corpus else None
        for s in d["abstract"]:
            sentences += 1
            genes = set()
            for tok in _TOKEN.findall(s):
                for t in (tok, tok.replace("-", ""), *tok.split("-")):
                    ent = lexicon.genes.get(t)
                    if ent is None:
                        continue
                    if t in lexicon.approved or any(names_gene(long, ent, lexicon.name_words(ent.id))
                                                    for long in own.readings(t)):
                        genes.add(t)
            score(lexicon, s, genes, legacy_genes(data, s), before)
            score(lexicon, s, genes, gated_genes(lexicon, s, readings), after)
    return {"sentences": sentences, "before": before, "after": after}


def civic_readings(data: Path, index: Path | None) -> Readings:
    """The CIViC corpus index's readings (built into ``index`` when it holds none)."""
    from bioevidence.librarian.index import LocalIndex, build_index

    if index is None:
        return None
    if not (index / "index.sqlite").is_file():
        build_index([data / "civic_corpus" / "snapshots"], index)
    return LocalIndex(index).synonyms().readings


def _row(name: str, t: Tally) -> str:
    return (f"| {name} | {t.tokens:,} | {t.listed:,} | {t.expanded:,} | {100 * t.rate():.2f}% | "
            f"{100 * t.listed_rate():.1f}% |")


def _doc_row(name: str, t: Tally, bold: bool = False) -> str:
    rate = f"{100 * t.rate():.2f}%"
    return (f"| {name} | {t.tokens:,} | {t.listed:,} | {t.expanded:,} | "
            f"{f'**{rate}**' if bold else rate} |")


def doc_table(civic_static: dict[str, Any], civic_corpus: dict[str, Any], sci_static: dict[str, Any],
              sci_corpus: dict[str, Any]) -> str:
    """The rates table of docs/librarian.md ("Names"), as ``tools/reproduce.py aliases`` checks it."""
    return "\n".join([
        "| set, rule | non-gene tokens | HGNC-listed | read as a gene | rate |",
        "|---|---|---|---|---|",
        _doc_row("CIViC questions, before", civic_static["before"]),
        _doc_row("CIViC questions, gated (static)", civic_static["after"]),
        _doc_row("CIViC questions, gated + corpus", civic_corpus["after"]),
        _doc_row("SciFact sentences, before", sci_static["before"]),
        _doc_row("SciFact sentences, gated (static)", sci_static["after"]),
        _doc_row("SciFact sentences, gated + corpus", sci_corpus["after"], bold=True)])


def main() -> None:
    from bioevidence.librarian.lexicon import default_lexicon

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--civic-index", default="/tmp/bioevidence_civic_index",
                    help="index of civic_corpus/snapshots (built here when missing) for the corpus readings")
    ap.add_argument("--show", type=int, default=12, help="list the most frequent misreadings and misses")
    ap.add_argument("--markdown", action="store_true", help="the rates table as docs/librarian.md states it")
    args = ap.parse_args()
    data = Path(args.data)
    lexicon = default_lexicon(data / "references")
    civic_static = civic_figures(lexicon, data, None)
    civic_corpus = civic_figures(lexicon, data, civic_readings(data, Path(args.civic_index)))
    sci_static = scifact_figures(lexicon, data, corpus=False)
    sci_corpus = scifact_figures(lexicon, data, corpus=True)
    print(f"CIViC: {civic_static['questions']} questions from civic.biomarkers.tsv; SciFact: "
          f"{sci_static['sentences']:,} sentences\n")
    if args.markdown:
        print(doc_table(civic_static, civic_corpus, sci_static, sci_corpus))
    else:
        print("| set, rule | non-gene tokens | HGNC-listed | read as a gene | rate | of listed |")
        print("|---|---|---|---|---|---|")
        print(_row("CIViC, before", civic_static["before"]))
        print(_row("CIViC, gated (static)", civic_static["after"]))
        print(_row("CIViC, gated + corpus", civic_corpus["after"]))
        print(_row("SciFact, before", sci_static["before"]))
        print(_row("SciFact, gated (static)", sci_static["after"]))
        print(_row("SciFact, gated + corpus (other half)", sci_corpus["after"]))
    print("\n| alias recall (CIViC questions, gene symbol replaced by each HGNC alias) | read as the gene |")
    print("|---|---|")
    for name, figs in (("before", civic_static), ("gated (static)", civic_static), ("gated + corpus", civic_corpus)):
        r = figs["recall"]
        hit = r["before"] if name == "before" else r["after"]
        print(f"| {name} | {hit:,} / {r['total']:,} ({100 * hit / max(1, r['total']):.1f}%) |")
    if args.show:
        for name, t in (("SciFact gated + corpus", sci_corpus["after"]),
                        ("CIViC gated + corpus", civic_corpus["after"]), ("SciFact before", sci_static["before"])):
            print(f"\nmost frequent misreadings, {name}: "
                  + ", ".join(f"{w} ×{n}" for w, n in t.words.most_common(args.show)))
        print("\nmisses (alias recall, gated + corpus): "
              + "; ".join(f"{w} ×{n}" for w, n in civic_corpus["missed"].most_common(args.show)))


if __name__ == "__main__":
    main()
