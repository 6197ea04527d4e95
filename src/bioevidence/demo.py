"""``bioevidence demo``: the whole loop, offline, on a corpus bundled in the package.

1. **find**: index six pinned open-access papers (``_data/demo``, CC BY, one retracted; see its
   ATTRIBUTION.md) and ask a question; sentences are ranked across the papers, the retracted
   paper is withheld;
2. **pin / check**: the answer becomes an evidence record (profile ``librarian-evidence``),
   validated against the bundled snapshots: every quote re-found in its pinned paper;
3. **fix**: ``revise()`` runs on a proposal that misquotes one sentence and asks for the
   knowledge-base use too; the gate's exact correction goes back to the proposer (a model when
   one is configured, else a scripted one that applies the correction), and what needs a person
   (knowledge-base use needs human acceptance) goes to the review queue;
4. **report**: one self-contained HTML file with the answer, the gate's decisions and the loop.

Everything runs from the installed package: no network, no ``../shared``.
"""

from __future__ import annotations

import copy
import html
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ConfigurationError, plural
from .resources import data_dir

__all__ = ["QUESTION", "DemoResult", "run_demo"]

QUESTION = "Do KRAS mutations predict resistance to EGFR tyrosine kinase inhibitors in lung cancer?"


@dataclass
class DemoResult:
    folder: Path
    report: Path
    record: Path
    queue: Path
    status: str  # the record's overall status
    outcomes: list[str]  # the loop's attempts
    entry: int | None  # review queue entry


def _bundle() -> Path:
    folder = data_dir("demo")
    if not (folder / "snapshots" / "literature.json").is_file():
        raise ConfigurationError(f"the demo corpus is missing from {folder}; reinstall bioevidence")
    return folder


def _misquoted(record: dict[str, Any]) -> dict[str, Any]:
    """The record as a careless model would send it: one quote with a word changed, both uses."""
    bad = copy.deepcopy(record)
    item = bad["evidence_items"][0]
    words = item["extracted_text"].split()
    at = next((i for i, w in enumerate(words) if len(w) > 6 and w.isalpha()), len(words) // 2)
    words[at] = "never" if words[at] != "never" else "always"
    item["extracted_text"] = " ".join(words)
    bad["requested_uses"] = ["research_summary", "knowledge_base"]
    return bad


def _scripted(first: dict[str, Any]) -> Any:
    """A proposer that sends ``first``, then applies the requote fixes the gate sends back (each
    feedback line carries its structured fix: :class:`~bioevidence.loop.revise.Feedback`)."""
    import re

    state: dict[str, Any] = {"record": first}

    def propose(feedback: list[str]) -> dict[str, Any]:
        record = copy.deepcopy(state["record"])
        for line in feedback:
            fix = getattr(line, "fix", None)
            match = re.fullmatch(r"\$\.evidence_items\[(\d+)\]\.extracted_text", fix.field_path) if fix else None
            if fix is not None and fix.action == "requote" and match:
                record["evidence_items"][int(match.group(1))]["extracted_text"] = fix.value
        state["record"] = record
        return record

    return propose


def _model(first: dict[str, Any], llm: Any) -> Any:
    """A model proposer: it gets the record's quotes and the gate's feedback, and replies with
    corrected quotes (``{"quotes": [{"item": n, "text": …}]}``)."""
    schema = {"type": "object", "required": ["quotes"], "properties": {"quotes": {"type": "array", "items": {
        "type": "object", "required": ["item", "text"],
        "properties": {"item": {"type": "integer"}, "text": {"type": "string"}}}}}}
    state: dict[str, Any] = {"record": first, "round": 0}

    def propose(feedback: list[str]) -> dict[str, Any]:
        record = copy.deepcopy(state["record"])
        state["round"] += 1
        if state["round"] > 1 and feedback:
            quotes = [{"item": n, "text": it["extracted_text"]} for n, it in enumerate(record["evidence_items"], 1)]
            prompt = ("Fix the quotes of this evidence record as the gate's feedback says; reply with every quote, "
                      f"corrected.\nQuotes: {json.dumps(quotes)}\nFeedback:\n" + "\n".join(feedback))
            reply = llm.complete_json([{"role": "user", "content": prompt}], schema, name="quotes").value
            for q in reply.get("quotes", []):
                n = q.get("item")
                if isinstance(n, int) and 1 <= n <= len(record["evidence_items"]) and isinstance(q.get("text"), str):
                    record["evidence_items"][n - 1]["extracted_text"] = q["text"]
        state["record"] = record
        return record

    return propose


def run_demo(out: Path | str, *, llm: Any = None, echo: Any = print) -> DemoResult:
    """Run the loop into ``out`` (created; an earlier demo there is replaced) and return where it went."""
    from .gate.grounders.config import GrounderOptions, build_grounders
    from .gate.validator import Validator
    from .io import atomic_write_text
    from .librarian.answering import answer_question
    from .librarian.index import build_index
    from .librarian.librarian import Librarian
    from .librarian.render import render
    from .loop.queue import ReviewQueue
    from .loop.revise import revise

    bundle = _bundle()
    folder = Path(out)
    if folder.exists() and (folder / "demo.json").is_file():
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    snapshots = folder / "snapshots"
    shutil.copytree(bundle / "snapshots", snapshots)
    echo(f"1/5 find: indexing {len(list(snapshots.glob('*.xml.gz')))} pinned papers")
    build_index([snapshots], folder / "index")
    lib = Librarian(folder / "index", vocabularies=(bundle / "civic-vocabulary.jsonl",))
    found = lib.ask(QUESTION, top_k=8, papers=5)
    result = found.to_json()
    echo(f"    {len(found.ranked)} sentences from {len({s.paper for s in found.ranked})} papers; "
         f"{plural(len(found.withheld), 'retracted paper')} withheld")
    echo("2/5 check: the answer's record against the pinned papers")
    cited, record, report = answer_question(found, store=snapshots)
    if record is None or report is None:
        raise ConfigurationError("the demo question found no evidence in the bundled corpus; reinstall bioevidence")
    record_path = folder / "records" / (record["record_id"].split(":", 1)[-1] + ".json")
    record_path.parent.mkdir(exist_ok=True)
    atomic_write_text(record_path, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    echo(f"    {report.overall_status}: {len(report.verified)} of {len(record['evidence_items'])} quotes verified")
    echo("3/5 fix: revise() on a proposal with one misquote, for research_summary and knowledge_base")
    validator = Validator("librarian-evidence", grounders=build_grounders(GrounderOptions(snapshot_dir=snapshots)))
    first = _misquoted(record)
    propose = _model(first, llm) if llm is not None else _scripted(first)
    attempts = revise(propose, validator, rounds=3)
    for a in attempts:
        codes = ", ".join(a.report.reason_codes()) if a.report is not None else "-"
        echo(f"    round {a.round}: {a.outcome} ({a.reason}; {codes})")
    queue_path = folder / "review.sqlite"
    with ReviewQueue(queue_path) as queue:
        entry = queue.add_attempts(attempts, profile="librarian-evidence")
    echo(f"4/5 review: {'entry ' + str(entry) + ' queued in ' + str(queue_path) if entry else 'nothing to review'}")
    page = _report(render(result, "html", cited.to_json()), report, attempts, entry, llm is not None)
    report_path = folder / "report.html"
    atomic_write_text(report_path, page)
    atomic_write_text(folder / "demo.json", json.dumps({"question": QUESTION, "record": str(record_path),
                                                         "status": report.overall_status,
                                                         "outcomes": [a.outcome for a in attempts],
                                                         "review_entry": entry}, indent=2) + "\n")
    echo(f"5/5 report: {report_path}")
    return DemoResult(folder, report_path, record_path, queue_path, report.overall_status,
                      [a.outcome for a in attempts], entry)


def _report(answer_html: str, report: Any, attempts: list[Any], entry: int | None, model: bool) -> str:
    """The answer page with two more sections: the gate's decision and the loop's rounds."""
    e = html.escape
    gate = [f"<h2>The gate</h2><p>Record <code>{e(report.record_id or '')}</code>: <strong>"
            f"{e(report.overall_status)}</strong> ({len(report.verified)} quotes verified against their pinned "
            "papers).</p><ul>"]
    for d in report.use_decisions:
        gate.append(f"<li>{e(d.use)}: {e(d.admission_status)} {e(', '.join(d.reason_codes))}</li>")
    gate.append("</ul>")
    loop = [f"<h2>The loop</h2><p>Proposer: {'a model' if model else 'scripted (no model configured)'}; "
            "the first proposal misquotes one sentence and asks for the knowledge_base use too.</p><ol>"]
    for a in attempts:
        codes = ", ".join(a.report.reason_codes()) if a.report is not None else ""
        loop.append(f"<li>{e(a.outcome)}: {e(a.reason)} {e(codes)}")
        if a.feedback:
            loop.append("<ul>" + "".join(f"<li><code>{e(line)}</code></li>" for line in a.feedback) + "</ul>")
        loop.append("</li>")
    loop.append("</ol>")
    if entry is not None:
        loop.append(f"<p>Queued for a person as review entry {entry} (<code>bioevidence review list --queue "
                    "review.sqlite</code>).</p>")
    return answer_html.replace("</body></html>", "".join(gate + loop) + "</body></html>")
