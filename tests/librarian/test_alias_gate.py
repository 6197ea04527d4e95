"""The offline planner reads an HGNC alias as a gene only in a gene context and when the word has
no stronger reading (issue 28, item 1): measured on questions written by script from the CIViC
2016 export and on every sentence of SciFact abstracts (the same code as ``tools/eval_aliases.py``)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from bioevidence.librarian.abbreviations import Synonyms, mine
from bioevidence.librarian.lexicon import Lexicon, default_lexicon
from bioevidence.librarian.planner import OfflinePlanner

TOOLS = Path(__file__).resolve().parents[2] / "tools"


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    """``tools/eval_aliases.py``: the test measures with the script that prints the table."""
    if str(TOOLS) not in sys.path:
        sys.path.insert(0, str(TOOLS))
    return importlib.import_module("eval_aliases")


@pytest.fixture(scope="module")
def lexicon(shared_data: Path) -> Lexicon:
    return default_lexicon(shared_data / "references")


@pytest.fixture(scope="module")
def scifact_readings(tool: Any, shared_data: Path) -> Any:
    """What the SciFact abstracts define their short forms as (Schwartz & Hearst)."""
    return tool.mined(tool.scifact_docs(shared_data)).readings


@pytest.mark.parametrize(("question", "word"), [
    ("Does vitamin B12 deficiency cause anaemia?", "B12"),
    ("Is BAT thermogenesis increased by cold exposure?", "BAT"),
    ("Do ROS damage DNA in ageing cells?", "ROS"),
    ("Are HSC quiescent in the bone marrow niche?", "HSC"),
    ("Does GATA-3 drive Th2 differentiation?", "GATA"),
    ("Is PCP use associated with psychosis?", "PCP"),
])
def test_the_issues_words_are_not_genes(lexicon: Lexicon, question: str, word: str) -> None:
    """B12 → NDUFB3, BAT → BAAT, ROS → ROS1, HSC → FUT1, GATA-3 → QRSL1, PCP → PRCP no more."""
    wrong = {"B12": "NDUFB3", "BAT": "BAAT", "ROS": "ROS1", "HSC": "FUT1", "GATA": "QRSL1", "PCP": "PRCP"}[word]
    assert lexicon.genes[word].label == wrong  # HGNC does list it: the test checks something
    labels = {e.label for e in lexicon.recognise(question)}
    assert wrong not in labels, labels
    plan = OfflinePlanner(lexicon).plan(question)
    assert not any(wrong in s.query for s in plan.subqueries)


def test_a_hyphenated_approved_symbol_is_that_gene(lexicon: Lexicon) -> None:
    assert {e.label for e in lexicon.recognise("Does GATA-3 drive Th2 differentiation?")} == {"GATA3"}
    assert "IL6" in {e.label for e in lexicon.recognise("Does IL-6 predict survival?")}


def test_a_word_with_a_stronger_reading_stays_one_in_a_gene_context(lexicon: Lexicon, scifact_readings: Any) -> None:
    """Even beside "expression" or another gene: a vitamin, a cell type, a letter and digits, and
    (with an index's corpus readings) a short form the corpus defines as something else."""
    for question, word in (("Does vitamin B12 deficiency change KRAS mutation rates?", "B12"),
                           ("Do HSC expressing KIT expand after transplant?", "HSC"),
                           ("Does E2 increase ESR1 expression?", "E2")):
        wrong = lexicon.genes[word].label  # what HGNC lists the word for
        assert wrong not in {e.label for e in lexicon.recognise(question)}, (question, wrong)
    question = "Do ROS increase EGFR expression in lung cells?"
    assert "ROS1" in {e.label for e in lexicon.recognise(question)}  # no corpus said otherwise
    assert "ROS1" not in {e.label for e in lexicon.recognise(question, scifact_readings)}
    assert scifact_readings("ROS")  # SciFact defines it ("reactive oxygen species")


def test_real_aliases_in_a_gene_context_are_read_as_their_gene(lexicon: Lexicon) -> None:
    for question, gene in (("Is HER2 amplification associated with trastuzumab response?", "ERBB2"),
                           ("Does KRAS2 G12D confer resistance to cetuximab?", "KRAS"),
                           ("Is ROS fusion sensitive to crizotinib?", "ROS1"),
                           ("Does MMAC1 deletion predict poor outcome in glioma?", "PTEN"),
                           ("HER2-positive breast cancer and lapatinib", "ERBB2")):
        assert gene in {e.label for e in lexicon.recognise(question)}, question


def test_measured_false_expansions_and_alias_recall(tool: Any, lexicon: Lexicon, shared_data: Path,
                                                    civic_index: Path, scifact_readings: Any) -> None:
    """At most 1% of non-gene tokens read as genes (CIViC questions; SciFact sentences, an upper
    bound), fewer than the rule before; at least 93% of HGNC aliases in CIViC questions (a variant
    or "mutation" beside them) still read as their gene (95.6% measured)."""
    from bioevidence.librarian.index import LocalIndex

    civic = tool.civic_figures(lexicon, shared_data, LocalIndex(civic_index).synonyms().readings)
    assert civic["questions"] > 1000
    assert civic["after"].rate() <= 0.01 and civic["after"].expanded <= civic["before"].expanded
    recall = civic["recall"]
    assert recall["total"] > 3000 and recall["after"] / recall["total"] >= 0.93, civic["missed"].most_common(10)
    sci = tool.scifact_figures(lexicon, shared_data, corpus=True, step=3)
    assert sci["sentences"] > 10_000
    assert sci["after"].rate() <= 0.01
    assert sci["after"].expanded < 0.5 * sci["before"].expanded  # 2,005 against 6,687 over every sentence
    misread = {w.split("→")[0] for w in sci["after"].words}
    assert not misread & {"ROS", "HSC", "B12", "BAT", "PCP", "GATA", "ART", "LPS"}, sci["after"].words.most_common(20)


def test_mined_readings_come_from_the_corpus(shared_data: Path, tool: Any) -> None:
    docs = tool.scifact_docs(shared_data)
    syn = Synonyms.of(mine(d["abstract"] for d in docs[:2000]))
    assert max(syn.readings("ROS").items(), key=lambda kv: kv[1])[0].lower() == "reactive oxygen species"
