"""An evidence record out of ``ask``: what the librarian found, as the gate reads it.

:func:`record_for` turns an :class:`~bioevidence.librarian.results.Answer` into one record of
the built-in ``librarian-evidence`` profile: the question as the statement's subject
(``entity_type`` ``question``), each paper a ``publication`` source (its identifier, the pinned
metadata title, the pinned hash), each returned sentence an evidence item (``literature_quote``,
``deterministic_parser``: the text is cut from the pinned bytes, never written by a model) with a
``…#<passage id>`` locator, and one evidence line per stance. The statement is that the question is
addressed by this evidence, so every line's direction is ``supports``; its rationale says the
sentences' stance toward the question read as a claim (supports, contradicts, undetermined,
neutral), which is the librarian's reading, not the gate's. The profile admits the record when every quote verifies
against the store; a quote that does not is BEV017 (rejected) or BEV015 (review), a retracted
paper BEV019 (rejected), and with no literature source the record goes to review (BEV029).

:func:`pin_cited` copies what the cited papers rest on into a snapshot folder, so that
``bioevidence validate --snapshot-dir STORE`` checks the record against the same bytes: works of
a snapshot folder are copied with their catalogue entries, JATS files are pinned as local works.
"""

from __future__ import annotations

import hashlib
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError, plural
from .results import Answer, artifact_id, uri

__all__ = ["PROFILE", "pin_cited", "record_for"]

PROFILE = "librarian-evidence"
_ORDER = ("supports", "contradicts", "undetermined", "neutral")
_AGENT = {"id": "bioevidence:librarian", "name": "bioevidence librarian", "agent_type": "software"}


def record_for(answer: Answer, *, uses: tuple[str, ...] = ("research_summary",)) -> dict[str, Any]:
    """The evidence record of one answer (see module docstring); deterministic for the same answer."""
    key = hashlib.sha256(answer.question.encode("utf-8")).hexdigest()[:16]
    rid = f"bioev:ask-{key}"
    sources: dict[str, dict[str, Any]] = {}
    items: list[dict[str, Any]] = []
    lines: dict[str, list[str]] = {}
    for n, span in enumerate(answer.ranked, 1):
        doc = answer.papers[span.paper].doc
        sid = artifact_id(doc)
        sources.setdefault(sid, {
            "id": sid, "title": doc.title or doc.doc_id, "source_type": "publication", "uri": uri(doc),
            "version": f"sha256:{doc.sha256[:12]}", "retrieved_at": doc.retrieved_at or "1970-01-01T00:00:00Z",
            "sha256": doc.sha256, "observed_sha256": doc.sha256})
        item_id = f"{rid}/evidence/{n}"
        items.append({"id": item_id, "source_artifact_id": sid, "locator": f"{uri(doc)}#{span.passage.pid}",
                      "extracted_text": span.text, "evidence_type": "literature_quote",
                      "extraction_method": "deterministic_parser", "created_by": dict(_AGENT),
                      "scope": list(answer.scope)})
        lines.setdefault(span.stance if span.stance in _ORDER else "neutral", []).append(item_id)
    # Every verified sentence supports the record's statement (the question is addressed by this
    # evidence); each line's rationale gives its sentences' stance toward the question read as a claim.
    evidence_lines = [{"id": f"{rid}/line/{stance}", "direction": "supports", "evidence_item_ids": ids,
                       "rationale": f"stance toward the question read as a claim: {stance} "
                                    f"({plural(len(ids), 'sentence')}, by the {_by(answer)})"}
                      for stance, ids in sorted(lines.items(), key=lambda kv: _ORDER.index(kv[0]))]
    if not items:
        raise ConfigurationError("the answer holds no evidence to record; ask another question or widen the index")
    return {
        "record_id": rid, "profile_id": PROFILE,
        "statement": {
            "id": f"{rid}/statement", "predicate": "addressed_by", "statement_status": "proposed",
            "subject": {"id": f"bioev:question-{key}", "label": answer.question, "entity_type": "question"},
            "object": {"id": f"{rid}/evidence", "label": f"evidence for: {answer.question}"[:500],
                       "entity_type": "evidence_set"},
            "scope": list(answer.scope), "evidence_lines": evidence_lines, "created_by": dict(_AGENT)},
        "source_artifacts": list(sources.values()),
        "evidence_items": items,
        "adjudications": [],
        "requested_uses": list(uses),
    }


def _by(answer: Answer) -> str:
    return "model" if any(s.stance_by == "llm" for s in answer.ranked) else "stance model"


def pin_cited(answer: Answer, store: Path | str) -> Path:
    """Pin every paper the answer cites into ``store`` (see module docstring); returns the folder.

    A paper already in ``store`` is left alone; one read from a JSONL corpus has no pinned
    identity to copy and is skipped (its items will not verify: the record goes to review).
    """
    from ..sources.catalogue import CATALOGUE_NAME, Catalogue
    from ..sources.local import pin_local
    from ..sources.store import SnapshotStore

    folder = Path(store)
    folder.mkdir(parents=True, exist_ok=True)
    target = SnapshotStore(folder)
    catalogue = Catalogue.load(folder / CATALOGUE_NAME)
    jats: list[Path] = []
    changed = False
    for paper in {answer.papers[s.paper].doc.doc_id: answer.papers[s.paper] for s in answer.ranked}.values():
        doc = paper.doc
        if catalogue.get(uri(doc)) is not None:
            continue
        source = Path(doc.source)
        home = source.parent if (source.parent / CATALOGUE_NAME).is_file() else None
        if home is not None and home.resolve() != folder.resolve():
            work = Catalogue.load(home / CATALOGUE_NAME).get(uri(doc))
            if work is None:
                continue
            origin = SnapshotStore(home)
            for sha in work.hashes:
                found = origin.find(sha)
                if found is not None and not target.has(sha):
                    shutil.copyfile(found, folder / found.name)
            catalogue.add(work)
            changed = True
        elif source.is_file() and source.name.endswith((".xml", ".nxml", ".xml.gz", ".nxml.gz")):
            jats.append(source)
    if changed:
        catalogue.save(folder / CATALOGUE_NAME)
    if jats:
        pin_local(jats, folder, now=datetime.now(UTC).replace(microsecond=0).isoformat())
    return folder
