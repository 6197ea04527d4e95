"""civic-literature: bioai-evidence-validator 0.8.0's CIViC literature controls on our engine, side by side.

The peer's case (``examples/civic_literature`` of its sdist) is read in place: its profile.yaml loads
unchanged with :func:`bioevidence.load_profile`, and its snapshot folder (``literature.json`` and the
gzip JATS named by SHA-256) is our grounders' ``snapshot_dir`` as it is. The records are rebuilt by
``civic_literature_records`` following the peer's documented method; its committed ``results/`` give
its figures, and 0.8.0 itself (``$BIOEVIDENCE_REFERENCE_PYTHON``) is run once, in one batch, on the
rebuilt records (to check the rebuild against its ``controls.jsonl``) and on the whole-paper quotes.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bioevidence import GrounderOptions, Validator, build_grounders, load_profile

from .civic_literature_records import CONTROLS, PARTS, Case, Corpus, control_cases, whole_paper_cases
from .common import REPO, CaseResult, CaseUnavailable, example, peer_summary, rate, table

NAME = "civic-literature"
PER_PART = 40  # whole-paper quotes sampled per part
SEED = 7
EXPECTED = {"fabricated_identifier": "BEV016", "real_identifier_wrong_paper": "BEV017", "altered_quote": "BEV017",
            "negation_flip": "BEV017", "species_swap": "BEV017", "retracted_source": "BEV019"}
DECIDING = ("error", "review")

# Runs in 0.8.0's interpreter: argv[1] the case folder; one record per stdin line, one answer per line.
PEER_SIDE = r"""
import json, sys
from pathlib import Path
from bioevidence_validator.engine import RecordValidator
from bioevidence_validator.grounding import SnapshotStore, SourceBytesGrounder
from bioevidence_validator.literature import LiteratureGrounder

case = Path(sys.argv[1])
snapshots = case / "sources" / "snapshots"
store = SnapshotStore.from_directory(snapshots)
catalogue = json.loads((snapshots / "literature.json").read_text(encoding="utf-8"))
gate = RecordValidator(profile=case / "profile.yaml",
                       grounders=[SourceBytesGrounder(store), LiteratureGrounder(store, catalogue)])
for line in sys.stdin:
    report = gate.validate(json.loads(line))
    print(json.dumps([report["overall_status"], sorted({f["rule_id"] for f in report["findings"]})]))
"""


@dataclass(frozen=True)
class Outcome:
    status: str
    codes: tuple[str, ...]  # the deciding codes (error, review)
    notes: tuple[str, ...] = ()  # warning and info codes
    verified: bool = False
    messages: tuple[tuple[str, str], ...] = ()  # (code, message) of every finding

    def message(self, code: str) -> str:
        return next((m for c, m in self.messages if c == code), "")


def peer_python() -> Path:
    configured = os.environ.get("BIOEVIDENCE_REFERENCE_PYTHON")
    python = Path(configured) if configured else REPO / ".ci" / "cache" / "reference" / "bin" / "python"
    if not python.exists():
        raise CaseUnavailable(f"no 0.8.0 interpreter at {python}: set BIOEVIDENCE_REFERENCE_PYTHON to a Python "
                              "with bioai-evidence-validator==0.8.0 installed (.ci/run does)")
    return python


class PeerRun:
    """0.8.0 validating a batch in its own interpreter, started now and read when asked (so both engines
    run at once); input and output go through files, so no pipe can fill up."""

    def __init__(self, folder: Path, records: Iterable[dict[str, Any]]) -> None:
        python = peer_python()
        self._dir = tempfile.TemporaryDirectory(prefix="civic-peer-")
        self._work = Path(self._dir.name)
        (self._work / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        self._files = [(self._work / name).open(mode) for name, mode in
                       (("in.jsonl", "rb"), ("out.jsonl", "wb"), ("err.txt", "wb"))]
        self._process = subprocess.Popen([str(python), "-c", PEER_SIDE, str(folder)], stdin=self._files[0],
                                         stdout=self._files[1], stderr=self._files[2], cwd=self._work)

    def stop(self) -> None:
        """End the child if it still runs (an error on our side), and remove its files."""
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        for handle in self._files:
            handle.close()
        self._dir.cleanup()

    def results(self, timeout: float = 600) -> list[Outcome]:
        self._process.wait(timeout=timeout)
        for handle in self._files:
            handle.close()
        if self._process.returncode:
            error = (self._work / "err.txt").read_text(encoding="utf-8", errors="replace")
            raise RuntimeError(f"0.8.0 failed ({self._process.returncode}): {error[-2000:]}")
        text = (self._work / "out.jsonl").read_text(encoding="utf-8")
        out = []
        for line in text.splitlines():
            status, codes = json.loads(line)
            out.append(Outcome(status, tuple(codes), verified=status == "admitted"))
        return out


def ours(validator: Validator, cases: Sequence[Case]) -> list[Outcome]:
    out = []
    for case in cases:
        report = validator.validate(case.record, floats=False)
        out.append(Outcome(report.overall_status,
                           tuple(report.reason_codes()),
                           tuple(sorted({f.rule_id for f in report.findings if f.severity not in DECIDING})),
                           "bioev:quote-1" in report.verified,
                           tuple((f.rule_id, f.message) for f in report.findings)))
    return out


def detected(control: str, outcome: Outcome) -> bool:
    """0.8.0's definition: not admitted, and the expected code among the findings."""
    return outcome.status != "admitted" and EXPECTED[control] in outcome.codes


def code_sets(sets: Iterable[Sequence[str]]) -> str:
    counts = Counter("+".join(codes) or "none" for codes in sets)
    return "; ".join(f"{codes} ({n})" for codes, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def quoted(text: str, limit: int = 220) -> str:
    text = " ".join(text.split()).replace("|", "/")
    return text if len(text) <= limit else text[:limit - 1] + "…"


def run(sdist: Path) -> CaseResult:
    folder = example(sdist, "civic_literature")
    theirs = peer_summary(folder)
    committed = (folder / "results" / "controls.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in committed.splitlines()]
    corpus = Corpus(folder)
    cases, skipped = control_cases(corpus)
    quotes = whole_paper_cases(corpus, PER_PART, SEED)
    peer = PeerRun(folder, (c.record for c in [*cases, *quotes]))
    try:
        profile = load_profile(folder / "profile.yaml")
        grounders = build_grounders(GrounderOptions(snapshot_dir=corpus.snapshots))
        mine = ours(Validator(profile, grounders=grounders), [*cases, *quotes])
        meaning = checks_section(profile, grounders, cases)
        rerun = peer.results()
    finally:
        peer.stop()
    return build(theirs, rows, skipped, cases, quotes, mine, rerun, meaning)


def checks_section(profile: Any, grounders: list[Any], cases: Sequence[Case]) -> str:
    """What the meaning checks do on these records: the profile as shipped runs none but the direction
    check (auto); literature-claim's checks add the negation cue; --cues adds the animal cue; --direction
    required shows what the direction check needs."""
    claim = dataclasses.replace(profile, checks=load_profile("literature-claim").checks)
    configurations = [
        ("their profile as shipped (cues none, direction auto)", Validator(profile, grounders=grounders)),
        ("with literature-claim's checks (cues [negation], direction auto)", Validator(claim, grounders=grounders)),
        ("with `--cues` (negation and animal)",
         Validator(profile, grounders=[*grounders, *build_grounders(GrounderOptions(cues=True))])),
        ("with `--direction required`",
         Validator(profile, grounders=[*grounders, *build_grounders(GrounderOptions(direction="required"))])),
    ]
    base = [c for c in cases if c.control == "base"]
    faults = [c for c in cases if c.control != "base"]
    lines, flagged = [], {}
    for label, validator in configurations:
        on_base, on_faults = ours(validator, base), ours(validator, faults)
        cue = [(c, o) for c, o in zip(base, on_base, strict=True) if "BEV022" in o.codes]
        flagged[label] = cue
        lines.append([label, f"{sum(o.status == 'admitted' for o in on_base)}/{len(base)}",
                      len(cue), sum("BEV035" in o.codes for o in on_base),
                      sum("BEV036" in o.notes for o in on_base),
                      f"{sum(o.status == 'admitted' for o in on_faults)}/{len(faults)}",
                      sum("BEV022" in o.codes for o in on_faults)])
    out = table(["configuration (ours)", "base admitted", "base BEV022", "base BEV035", "base BEV036 note",
                 "controls and retracted admitted", "of them also BEV022"], lines, right={1, 2, 3, 4, 5, 6})
    out += "\nBase records the cues send to a person (BEV022; the CIViC direction is the predicate):\n\n"
    seen: dict[str, tuple[Case, Outcome]] = {}
    for cue in flagged.values():
        for case, outcome in cue:
            seen.setdefault(case.pmid, (case, outcome))
    for pmid, (case, outcome) in sorted(seen.items(), key=lambda kv: int(kv[0])):
        predicate = case.record["statement"]["predicate"]
        wrong = " **(a cue error: this predicate is a negative claim, see notes)**" \
            if predicate.startswith("does_not_support") else ""
        out += f"- pmid:{pmid} `{predicate}`: {quoted(outcome.message('BEV022'), 120)}{wrong}\n"
    negative = sum(case.record["statement"]["predicate"].startswith("does_not_support") for case, _ in seen.values())
    out += ("\nNotes. The base records pass every text check in every configuration; what the checks add is "
            "meaning. The base sentence is one naming the item's gene in keyed-hash order, not a curator's "
            "deciding sentence, so some are negated findings (\"did not respond\", \"no significant "
            "associations\") offered as support: the negation cue sends those to a person, as documented "
            "(0.8.0 admits them; `--no-cues` gives its decision). The animal cue adds quotes only about "
            "xenografts or mice for a human-scoped claim. "
            + (f"{negative} of the flagged records are wrong: a CIViC \"Does Not Support\" item's predicate "
               "(`does_not_support_significance`) is a negative claim that a negated sentence bears out, and the "
               "cue did not read it as one. " if negative else
               "CIViC \"Does Not Support\" items (predicate `does_not_support_significance`) are read as negative "
               "claims (the cue knows a predicate that denies by its words: `not`, `no`, `does_not`, `lacks`), so "
               "a negated sentence offered for one is not flagged. ")
            + "The controls stay rejected whatever the checks add. The direction "
            "check cannot run here (no stance weights ship), so `auto` leaves the BEV036 note and `required` "
            "sends every record with a verified quote to review (BEV035): fail closed, as documented.\n")
    return out


def build(theirs: dict[str, Any], rows: list[dict[str, Any]], skipped: dict[str, int], cases: list[Case],
          quotes: list[Case], mine: list[Outcome], rerun: list[Outcome], meaning: str) -> CaseResult:
    n_cases = len(cases)
    ours_c, peer_c, ours_q, peer_q = mine[:n_cases], rerun[:n_cases], mine[n_cases:], rerun[n_cases:]
    committed = {(r["pmid"], r["control"]): (r["status"], tuple(r["reason_codes"])) for r in rows}
    same_keys = Counter((c.pmid, c.control) for c in cases) == Counter((r["pmid"], r["control"]) for r in rows)
    same_rows = sum(committed.get((c.pmid, c.control)) == (p.status, p.codes)
                    for c, p in zip(cases, peer_c, strict=True))
    same_status = sum(o.status == p.status for o, p in zip(ours_c, peer_c, strict=True))
    same_codes = sum(o.codes == p.codes for o, p in zip(ours_c, peer_c, strict=True))
    summary_controls: dict[str, Any] = theirs["controls"]

    lines, per_control = [], {}
    for control in ("base", *CONTROLS, "retracted_source"):
        pick = [i for i, c in enumerate(cases) if c.control == control]
        mine_here = [ours_c[i] for i in pick]
        peer_rows = [r for r in rows if r["control"] == control]
        m = summary_controls.get(control, {})
        n_peer = m.get("n", 0)
        if control == "base":
            peer_det, peer_adm = m.get("false_blocks", 0), n_peer - m.get("false_blocks", 0)
            our_det = sum(o.status != "admitted" for o in mine_here)
            expected = "admitted"
        else:
            peer_det, peer_adm = m.get("detected", 0), m.get("admitted", 0)
            our_det = sum(detected(control, o) for o in mine_here)
            expected = f"`{EXPECTED[control]}`"
        per_control[control] = {"n": len(mine_here), "detected": our_det,
                                "admitted": sum(o.status == "admitted" for o in mine_here)}
        lines.append([control, expected, n_peer, peer_det, peer_adm, code_sets(r["reason_codes"] for r in peer_rows),
                      len(mine_here), our_det, sum(o.status == "admitted" for o in mine_here),
                      code_sets(o.codes for o in mine_here), code_sets(o.notes for o in mine_here)])

    faults = [(c, o) for c, o in zip(cases, ours_c, strict=True) if c.control in CONTROLS]
    retracted = [(c, o) for c, o in zip(cases, ours_c, strict=True) if c.control == "retracted_source"]
    base = [(c, o) for c, o in zip(cases, ours_c, strict=True) if c.control == "base"]
    peer_faults = sum(summary_controls[k]["n"] for k in CONTROLS)
    peer_faults_admitted = sum(summary_controls[k]["admitted"] for k in CONTROLS)
    peer_base = summary_controls["base"]

    text = [f"# {NAME}: CIViC papers, literature negative controls and whole-paper quotes\n",
            f"bioai-evidence-validator 0.8.0's case `examples/civic_literature`, read in place from its sdist: "
            f"{theirs['papers']} open-access CIViC papers and {theirs['retracted_papers']} retracted ones, pinned as "
            "gzip JATS named by SHA-256 with the `literature.json` catalogue. Our engine: `Validator` with the "
            "peer's `profile.yaml` loaded unchanged (`load_profile`) and `build_grounders(GrounderOptions("
            "snapshot_dir=<their sources/snapshots>))` (source bytes and literature grounders on their folder as "
            "it is). The records are rebuilt by `tools/cases/civic_literature_records.py` from the peer's "
            "documented method (`pipeline.py`); 0.8.0's figures are its committed `results/summary.json` and "
            "`results/controls.jsonl`.\n",
            "## Negative controls, side by side\n",
            "Detected: not admitted and the expected code raised (0.8.0's definition). Codes: the deciding "
            "(error, review) codes with their record counts; notes: our warning and info codes.\n",
            table(["control", "expected", "0.8.0 records", "0.8.0 detected", "0.8.0 admitted", "0.8.0 codes",
                   "ours records", "ours detected", "ours admitted", "ours codes", "ours notes"], lines,
                  right={2, 3, 4, 6, 7, 8}),
            f"- Controlled faults admitted: 0.8.0 {rate(peer_faults_admitted, peer_faults)}, ours "
            f"{rate(sum(o.status == 'admitted' for _, o in faults), len(faults))}.",
            f"- Base records (a real sentence of the cited paper) admitted: 0.8.0 "
            f"{rate(peer_base['n'] - peer_base['false_blocks'], peer_base['n'])}, ours "
            f"{rate(sum(o.status == 'admitted' for _, o in base), len(base))}.",
            f"- Retracted sources admitted: 0.8.0 {summary_controls['retracted_source']['admitted']}/"
            f"{summary_controls['retracted_source']['n']}, ours {sum(o.status == 'admitted' for _, o in retracted)}/"
            f"{len(retracted)}.",
            f"- Rebuild check: our rebuild gives {'the same' if same_keys else 'NOT the same'} {len(cases)} "
            f"(paper, control) rows as 0.8.0's `controls.jsonl` ({len(rows)} rows; skipped "
            + ", ".join(f"{k} {v}" for k, v in skipped.items()) + "; 0.8.0's summary says "
            + ", ".join(f"{k} {v}" for k, v in sorted(theirs.get("skipped", {}).items())) + "), and 0.8.0 run "
            f"now on our rebuilt records gives the committed status and codes on {same_rows}/{len(cases)} of them: "
            "the records are the ones its pipeline built.",
            f"- Ours against 0.8.0 on the same {len(cases)} records: same status {same_status}/{len(cases)}, same "
            f"deciding codes {same_codes}/{len(cases)}.\n"]
    text += ["## Notes: every difference\n", notes(cases, ours_c, peer_c),
             "## The meaning checks on these records\n",
             "The peer's profile has no `checks:` section, so our engine runs on it what a profile without one "
             "gets: no cues and the direction check in `auto`. Our `literature-claim` profile would add the "
             "negation cue (BEV022). Every configuration below uses the same grounders on the same records.\n",
             meaning]
    whole, beyond_notes = whole_paper(quotes, ours_q, peer_q)
    text += ["## Beyond 0.8.0: quotes from every part of the paper\n",
             f"True sentences read from the JATS bytes with our own lxml reading (no entity resolution, no DTD, "
             f"no network; `civic_literature_records.part_sentences`), from every part of each of the "
             f"{theirs['papers']} corpus papers; a seeded sample (seed {SEED}) of at most {PER_PART} per part, "
             "each in a base-like record citing the paper by its PMID alone (no paragraph anchor, so 0.8.0 "
             "searches the whole paper too), validated by both engines in one batch each.\n",
             whole, beyond_notes]
    ok_q = sum(o.verified for o in ours_q)
    summary = {
        "controlled_faults": {"admitted": sum(o.status == "admitted" for _, o in faults), "n": len(faults)},
        "base": {"admitted": sum(o.status == "admitted" for _, o in base), "n": len(base)},
        "retracted": {"admitted": sum(o.status == "admitted" for _, o in retracted), "n": len(retracted)},
        "whole_paper_quotes": {"verified_ours": ok_q, "verified_peer": sum(o.verified for o in peer_q),
                               "n": len(quotes)},
        "peer": {"controlled_faults": {"admitted": peer_faults_admitted, "n": peer_faults},
                 "base": {"admitted": peer_base["n"] - peer_base["false_blocks"], "n": peer_base["n"]},
                 "retracted": {"admitted": summary_controls["retracted_source"]["admitted"],
                               "n": summary_controls["retracted_source"]["n"]}},
        "controls": per_control,
        "rebuild": {"same_rows": same_keys, "peer_rerun_identical": same_rows, "n": len(cases)},
    }
    return CaseResult(NAME, "\n".join(text).rstrip("\n") + "\n", summary)


def notes(cases: list[Case], mine: list[Outcome], peer: list[Outcome]) -> str:
    """Every difference between our findings and 0.8.0's on the same records, generated from them."""
    out = []
    status = [(c, o, p) for c, o, p in zip(cases, mine, peer, strict=True) if o.status != p.status]
    codes = [(c, o, p) for c, o, p in zip(cases, mine, peer, strict=True)
             if o.status == p.status and o.codes != p.codes]
    out.append(f"- **Decisions.** {len(status)} of {len(cases)} records decided differently"
               + ("." if not status else ": " + "; ".join(f"pmid:{c.pmid} {c.control} ours {o.status} "
                                                          f"({'+'.join(o.codes)}), 0.8.0 {p.status}"
                                                          for c, o, p in status) + "."))
    deciding = {"BEV017": "0.8.0 reads a paragraph with `itertext()`, which glues the items of a list nested in it "
                          "together, and its pipeline cut this quote from that glued text; we read the items as a "
                          "reader does, separated, so the glued words are not the paper's text (right: no reader "
                          "sees 'thetaThe'). The retraction rejects the record either way.",
                "BEV027": "the paper also carries an expression of concern, which 0.8.0 does not read; the "
                          "retraction rejects the record either way."}
    for c, o, p in codes:
        extra = sorted(set(o.codes) - set(p.codes))
        message = " / ".join(o.message(x) for x in extra)
        out.append(f"- **{'+'.join(extra) or 'codes'} on pmid:{c.pmid} ({c.control})**, same decision "
                   f"({o.status}; 0.8.0 {'+'.join(p.codes)}): \"{quoted(message, 420)}\": "
                   + " ".join(deciding.get(x, "") for x in extra).strip())
    notes_by_code: dict[str, list[tuple[Case, Outcome]]] = {}
    for c, o in zip(cases, mine, strict=True):
        for code in o.notes:
            notes_by_code.setdefault(code, []).append((c, o))
    why = {"BEV036": "an info note, \"{msg}\": no stance weights ship in this build (docs/stance.md), so the "
                     "direction check (`auto`) reads nothing and blocks nothing; 0.8.0 has no such check.",
           "BEV031": "an info note: the sentence 0.8.0's method picked (any `p`, `title` or `article-title`) is "
                     "outside the title, abstract and body; we verify it too and name the part. Parts: {parts}. "
                     "The reference-list ones quote the title of a cited work, not a finding of the paper: 0.8.0 "
                     "counts them as genuine support silently; ours names them, and a profile listing "
                     "`quote_parts` sends them to a person (BEV032).",
           "BEV030": "a warning, \"{msg}\": 0.8.0's paragraph holds the figure "
                     "nested in it (its `itertext()` reads the caption into the paragraph); we read the caption "
                     "as the figure's, as a reader does. Verified by both.",
           }
    for code in sorted(notes_by_code):
        hits = notes_by_code[code]
        parts = Counter(o.message("BEV031").split(" (")[0].replace("the quote is from ", "") for _, o in hits)
        template = why.get(code, "{msg}")
        msg = quoted(hits[0][1].message(code), 300)
        where = ", ".join(f"pmid:{c.pmid} {c.control}" for c, _ in hits) if len(hits) <= 3 else \
            ", ".join(f"{k} {v}" for k, v in sorted(Counter(c.control for c, _ in hits).items()))
        out.append(f"- **{code} on {len(hits)} record{'s' if len(hits) > 1 else ''}** ({where}): "
                   + template.format(msg=msg, parts=", ".join(f"{k} {v}" for k, v in sorted(parts.items()))))
    return "\n".join(out) + "\n"


def whole_paper(quotes: list[Case], mine: list[Outcome], peer: list[Outcome]) -> tuple[str, str]:
    lines = []
    for part in PARTS:
        pick = [i for i, c in enumerate(quotes) if c.control == part]
        lines.append([part, len(pick), sum(mine[i].verified for i in pick), sum(peer[i].verified for i in pick),
                      sum(mine[i].verified and not peer[i].verified for i in pick),
                      sum(peer[i].verified and not mine[i].verified for i in pick)])
    lines.append(["all parts", len(quotes), sum(o.verified for o in mine), sum(o.verified for o in peer),
                  sum(o.verified and not p.verified for o, p in zip(mine, peer, strict=True)),
                  sum(p.verified and not o.verified for o, p in zip(mine, peer, strict=True))])
    out = table(["part", "quotes", "verified (ours)", "verified (0.8.0)", "ours only", "0.8.0 only"], lines,
                right={1, 2, 3, 4, 5})
    only_ours = Counter(c.control for c, o, p in zip(quotes, mine, peer, strict=True) if o.verified and not p.verified)
    reasons = {"table cell": "cells not wrapped in a `p`", "back matter": "`funding-statement` elements",
               "footnote": "footnotes outside a `p`"}
    notes_text = ["", "Where they differ:", "",
                  "- **Verified by us, not by 0.8.0**: " + "; ".join(
                      f"{part} {n} ({reasons.get(part, 'not a `p` or title')})"
                      for part, n in sorted(only_ours.items()))
                  + ". 0.8.0 reads only `p`, `title` and `article-title` elements, so these are not quotable there "
                  "(BEV017, \"the quote does not appear in the cited paper\"), though each is the paper's text "
                  "as printed. The title of a cited work, quotable in both, is noted by ours (BEV031)."]
    elsewhere = Counter(o.message("BEV031").split(" (")[0] for c, o in zip(quotes, mine, strict=True)
                        if c.control in ("title", "abstract", "body", "section title") and "BEV031" in o.notes)
    for where, n in sorted(elsewhere.items()):
        notes_text.append(f"- {n} sentence(s) our reading took as main text ours places elsewhere (\"{where}\"): "
                          "a back-matter section (such as author contributions) inside `body`; verified by both.")
    for c, o, p in zip(quotes, mine, peer, strict=True):
        if p.verified and not o.verified:
            notes_text.append(f"- **0.8.0 verifies, we reject** pmid:{c.pmid} ({c.control}): "
                              f"\"{quoted(c.record['evidence_items'][0]['extracted_text'], 120)}\"; ours "
                              f"{'+'.join(o.codes)}: {quoted(o.message(o.codes[0]) if o.codes else '', 200)}")
    gaps = [c for c, o, p in zip(quotes, mine, peer, strict=True) if p.verified and not o.verified]
    if gaps:
        notes_text.append("  These are gaps in our JATS reader (`src/bioevidence/text/jats_walk.py`), not faults "
                          "in the quotes: it does not read a `notes` element inside `front` (where Wiley's "
                          "conversion puts conflict-of-interest and equal-contribution footnotes), and for a "
                          "`def-item` it keeps the `term` but drops a `def` whose text is in a `p` (a glossary's "
                          "expansions). 0.8.0 reads every `p`, so it verifies them. Reported for a fix in the "
                          "engine; this case does not change `src/`.")
    unverified = [(c, o) for c, o, p in zip(quotes, mine, peer, strict=True) if not o.verified and not p.verified]
    for c, o in unverified:
        notes_text.append(f"- **Neither verifies** pmid:{c.pmid} ({c.control}): ours {'+'.join(o.codes)}: "
                          f"{quoted(o.message(o.codes[0]) if o.codes else '', 200)}")
    return out, "\n".join(notes_text) + "\n"
