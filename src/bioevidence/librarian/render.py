"""What a researcher reads: ``ask`` and ``answer`` results as text, markdown, HTML or JSON.

Each format shows the question, the plan (its subqueries), the answer when there is one (its
direction in words with the papers counted by stance, the sentences that decided it first, what was
left out and why), then one header per paper (title, year, journal, PMID / PMCID / DOI, and flags:
retracted, expression of concern) followed by its sentences in rank order, each with its number,
its stance badge (with the stance model's confidence, or why it is not about the question) and
locator. The badges are the labels the verdict counts, so the two never disagree. Papers come in the order of
their best sentence. The HTML is one self-contained file (inline style, no scripts, nothing
fetched) that can be opened and shared; every text in it is escaped.

Every text here is input (a paper's sentences and titles, a model's reply), so each format goes
through one of the escape policies of :mod:`bioevidence.errors`: text through the terminal policy
(line by line; a model's sentences through the LLM text policy), Markdown through the LLM text
policy (no image or link of a paper or a model renders), HTML through the terminal policy before
``html.escape``, JSON through :func:`~bioevidence.errors.llm_json` (invisible characters written as
``\\uXXXX``: the decoded sentences stay verbatim).
"""

from __future__ import annotations

import html
from typing import Any
from urllib.parse import quote

from ..errors import escape_text, llm_json, llm_text, plural
from .wording import describe_plan

__all__ = ["FORMATS", "badge", "checked_items", "links", "render"]

FORMATS = ("text", "markdown", "html", "json")


def _papers(result: dict[str, Any]) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """(paper header fields, its items) in the order of each paper's best item."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for item in result.get("items", []):
        groups.setdefault(item["doc_id"], []).append(item)
    return [(items[0], items) for items in groups.values()]


def _ids(head: dict[str, Any]) -> str:
    parts = [f"PMID {head['pmid']}" if head.get("pmid") else "", f"{head['pmcid']}" if head.get("pmcid") else "",
             f"doi:{head['doi']}" if head.get("doi") else ""]
    return " · ".join(p for p in parts if p) or head["doc_id"]


def _flags(head: dict[str, Any]) -> list[str]:
    out = []
    if head.get("retracted"):
        out.append("RETRACTED" + (f" ({', '.join(head['notices'])})" if head.get("notices") else ""))
    if head.get("expression_of_concern"):
        out.append("EXPRESSION OF CONCERN" + (f" ({', '.join(head['notices'])})" if head.get("notices") else ""))
    return out


def _byline(head: dict[str, Any]) -> str:
    authors = head.get("authors") or []
    who = f"{authors[0]} et al." if len(authors) > 1 else (authors[0] if authors else "")
    bits = [b for b in (who, str(head["year"]) if head.get("year") else "", head.get("journal") or "") if b]
    return ", ".join(bits)


def render(result: dict[str, Any], fmt: str = "text", cited: dict[str, Any] | None = None,
           checked: dict[int, str] | None = None) -> str:
    """``result`` is ``Answer.to_json()``; ``cited`` a ``CitedAnswer.to_json()`` when answering.

    ``checked`` (HTML only) maps item numbers the gate checked to ``""`` (verified against the pinned
    bytes) or why not; by default it comes from ``cited``. Items it does not name say they were not
    checked."""
    if fmt == "json":
        return llm_json({**result, "answer": cited} if cited is not None else result, indent=2) + "\n"
    if fmt == "markdown":
        return _markdown(result, cited)
    if fmt == "html":
        return _html(result, cited, checked)
    return _text(result, cited)


def badge(item: dict[str, Any]) -> str:
    """An item's stance as a reader sees it: "supports 0.97", "undetermined 0.61", "neutral"."""
    confidence = item.get("stance_confidence")
    return f"{item['stance']} {confidence:.2f}" if isinstance(confidence, float) else str(item["stance"])


def _decided_by(cited: dict[str, Any]) -> str:
    """For a model's synthesis: the items whose stance decided the direction."""
    numbers = cited.get("deciding_items") or []
    if cited.get("mode") != "model" or not numbers:
        return ""
    return "Direction decided by " + ", ".join(f"[{n}]" for n in numbers)


def _plan(result: dict[str, Any]) -> list[str]:
    subs = [s["query"] for s in result.get("plan", {}).get("subqueries", [])]
    return subs


def retrieved_with(made: dict[str, Any]) -> str:
    """``hybrid (auto: the index has dense vectors …)`` from an answer's provenance."""
    said = f"{made['retriever']} ({made.get('retriever_why') or 'asked for'})"
    return f"{said}, with {made['feedback']} (--no-feedback turns it off)" if made.get("feedback") else said


def _text(result: dict[str, Any], cited: dict[str, Any] | None) -> str:
    lines = [f"Question: {result['question']}"]
    made = result.get("provenance") or {}
    if made.get("retriever"):
        lines.append(f"Retriever: {retrieved_with(made)}")
    subs = _plan(result)
    if subs:
        lines.append(f"Plan: {len(subs)} searches: " + " | ".join(subs[:4]) + (" | …" if len(subs) > 4 else ""))
    if result.get("fallback"):
        lines.append(f"Note: {result['fallback']}")
    if cited is not None:
        lines += ["", f"Answer: {cited['verdict']}"]
        if _decided_by(cited):
            lines.append(f"  {_decided_by(cited)}")
        for s in cited["sentences"]:
            lines.append(f"  {llm_text(s['text'])} " + "".join(f"[{n}]" for n in s["cites"]))
        for entry in cited["left_out"]:
            lines.append(f"  left out [{entry['item']}]: {entry['why']}")
        for entry in cited["dropped_sentences"]:
            lines.append(f"  dropped: “{llm_text(entry['text'])}” ({entry['why']})")
    for n, (head, items) in enumerate(_papers(result), 1):
        lines += ["", f"{n}. {head['title']}"]
        lines.append(f"   {_byline(head)} · {_ids(head)}")
        for flag in _flags(head):
            lines.append(f"   !! {flag}")
        for it in items:
            lines.append(f"   [{it['rank']}] {badge(it):<17} {it['locator']}")
            lines.append(f"       {it['text']}")
            if it.get("relevant") is False:
                lines.append(f"       (not about the question: {it.get('relevance')})")
    withheld = result.get("withheld_retracted") or []
    if withheld:
        lines += ["", f"Withheld: {plural(len(withheld), 'retracted paper')}: "
                  + ", ".join(w["doc_id"] for w in withheld) + " (--include-retracted shows them)"]
    if not result.get("items"):
        lines += ["", "No sentence of the indexed papers addresses the question."]
    return "\n".join(escape_text(line) for line in lines) + "\n"  # each line: the terminal policy


def _md(text: str) -> str:
    """Input text for Markdown: the LLM text policy (images and links inert), then table pipes and
    HTML escaped."""
    return llm_text(text).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def _markdown(result: dict[str, Any], cited: dict[str, Any] | None) -> str:
    lines = [f"## {_md(result['question'])}", ""]
    made = result.get("provenance") or {}
    if made.get("retriever"):
        lines += [f"*Retriever: {_md(retrieved_with(made))}*", ""]
    subs = _plan(result)
    if subs:
        lines.append("**Plan:** " + "; ".join(f"`{_md(q)}`" for q in subs))
    if result.get("fallback"):
        lines.append(f"> {_md(result['fallback'])}")
    if cited is not None:
        lines += ["", f"**Answer:** {_md(cited['verdict'])}", ""]
        if _decided_by(cited):
            lines += [f"*{_decided_by(cited)}*", ""]
        for s in cited["sentences"]:
            lines.append(f"- {_md(s['text'])} " + "".join(f"[{n}]" for n in s["cites"]))
        for entry in cited["left_out"]:
            lines.append(f"- *left out [{entry['item']}]*: {_md(entry['why'])}")
        for entry in cited["dropped_sentences"]:
            lines.append(f"- *dropped*: “{_md(entry['text'])}” ({_md(entry['why'])})")
    for n, (head, items) in enumerate(_papers(result), 1):
        lines += ["", f"### {n}. {_md(head['title'])}", f"{_md(_byline(head))} · {_md(_ids(head))}"]
        for flag in _flags(head):
            lines.append(f"**{_md(flag)}**")
        lines.append("")
        for it in items:
            off = it.get("relevant") is False
            note = f" *(not about the question: {_md(str(it.get('relevance')))})*" if off else ""
            lines.append(f"- **[{it['rank']}]** *{badge(it)}* `{_md(it['locator'])}`: {_md(it['text'])}{note}")
    withheld = result.get("withheld_retracted") or []
    if withheld:
        lines += ["", f"*Withheld: {plural(len(withheld), 'retracted paper')}: "
                  + ", ".join(_md(w["doc_id"]) for w in withheld) + "*"]
    return "\n".join(lines) + "\n"


_STYLE = ("body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;line-height:1.45;"
          "color:#1b1b1b}h1{font-size:1.35rem}h2{font-size:1.05rem;margin-bottom:.2rem}.meta{color:#555;"
          "font-size:.9rem}.flag{background:#b00020;color:#fff;padding:.1rem .4rem;border-radius:.2rem;"
          "font-size:.8rem}ol{padding-left:1.2rem}li{margin:.5rem 0}.stance{font-size:.8rem;padding:.05rem .35rem;"
          "border-radius:.2rem;background:#eee}.supports{background:#d8f0dc}.contradicts{background:#f7d9d9}"
          "code{font-size:.85rem}.answer{background:#f4f6fb;padding:.6rem 1rem;border-radius:.3rem}"
          ".note{color:#7a4b00}.proof{color:#555;font-size:.8rem}details{display:inline}summary{color:#555;"
          "font-size:.8rem;cursor:pointer}ol.plan{font-size:.9rem;color:#333}")


def _h(text: str) -> str:
    """Input text for HTML: the terminal policy (no bidi control or tag character reaches the page
    raw), then ``html.escape``."""
    return html.escape(escape_text(text))


def _rich(text: str, scripts: list[Any] | None) -> str:
    """``text`` escaped, with the paper's superscripts and subscripts shown as such (10<sup>−11</sup>)."""
    out, last = [], 0
    for a, b, kind in sorted(scripts or [], key=lambda s: (s[0], s[1])):
        if a < last or b <= a or b > len(text) or kind not in ("sup", "sub"):
            continue
        out += [_h(text[last:a]), f"<{kind}>{_h(text[a:b])}</{kind}>"]
        last = b
    out.append(_h(text[last:]))
    return "".join(out)


def links(head: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, URL) of a paper's pages: PubMed, PMC, DOI."""
    out = []
    if head.get("pmid"):
        out.append(("PubMed", f"https://pubmed.ncbi.nlm.nih.gov/{quote(str(head['pmid']))}/"))
    if head.get("pmcid"):
        out.append(("PMC", f"https://pmc.ncbi.nlm.nih.gov/articles/{quote(str(head['pmcid']).upper())}/"))
    if head.get("doi"):
        out.append(("DOI", f"https://doi.org/{quote(str(head['doi']), safe='/:;()._-')}"))
    return out


def _anchors(head: dict[str, Any]) -> str:
    return " · ".join(f"<a href=\"{html.escape(url)}\">{label}</a>" for label, url in links(head))


def _proof(it: dict[str, Any], checked: dict[int, str] | None) -> str:
    """What was checked for one item, in words (see :func:`render`'s ``checked``)."""
    e = _h
    sha = e(str(it.get("sha256") or "")[:12])
    when = str(it.get("retrieved_at") or "")[:10]
    retrieved = f"retrieved {e(when)}" if when and not when.startswith("1970") else "retrieval date not recorded"
    if checked is None:
        said = (f"quoted from pinned bytes <code>{sha}</code>, {retrieved} (not checked by the gate: "
                "<code>answer</code> or <code>validate</code> checks it)")
    elif it["rank"] in checked and checked[it["rank"]]:
        said = (f"<span class=\"note\">not verified: {e(checked[it['rank']])}</span> "
                f"(pinned bytes <code>{sha}</code>, {retrieved})")
    elif it["rank"] in checked:
        said = f"verified against pinned bytes <code>{sha}</code>, {retrieved}"
    else:
        said = f"not checked (pinned bytes <code>{sha}</code>, {retrieved})"
    anchors = _anchors(it)
    return f"<br><span class=\"proof\">{said}{' · ' + anchors if anchors else ''}</span>"


def checked_items(cited: dict[str, Any] | None) -> dict[int, str] | None:
    """Item number -> "" (verified) or why not, from a ``CitedAnswer.to_json()``."""
    if cited is None:
        return None
    out = {n: "" for n in cited.get("admitted_items") or []}
    out.update({entry["item"]: entry["why"] or "not verified" for entry in cited.get("left_out") or []})
    return out


def _provenance(result: dict[str, Any]) -> str:
    e = _h
    made = result.get("provenance") or {}
    bits = [e(str(made["tool"]))] if made.get("tool") else []
    if made.get("searched"):
        bits.append("searched " + e(str(made["searched"])))
    if made.get("retriever"):
        bits.append("retriever " + e(retrieved_with(made)))
    releases = made.get("releases") or []
    if releases:
        bits.append("releases: " + ", ".join(
            f"{e(r['name'])} {e(r.get('version') or r.get('file', ''))} (sha256 <code>{e(r['sha256'][:12])}</code>)"
            for r in releases))
    return " · ".join(bits)


def _html(result: dict[str, Any], cited: dict[str, Any] | None, checked: dict[int, str] | None = None) -> str:
    e = _h
    checked = checked if checked is not None else checked_items(cited)
    out = ["<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
           f"<title>{e(result['question'])}</title><style>{_STYLE}</style></head><body>",
           f"<h1>{e(result['question'])}</h1>"]
    subs = result.get("plan", {}).get("subqueries", [])
    if subs:
        out.append(f"<p class=\"meta\">Searched {len(subs)} way{'s' if len(subs) != 1 else ''}:</p><ol class=\"plan\">")
        for words, sub in zip(describe_plan(result.get("plan", {})), subs, strict=True):
            out.append(f"<li>{e(words)} <details><summary>query</summary><code>{e(sub['query'])}</code>"
                       "</details></li>")
        out.append("</ol>")
    if result.get("fallback"):
        out.append(f"<p class=\"note\">{e(result['fallback'])}</p>")
    items = {it["rank"]: it for it in result.get("items", [])}
    if cited is not None:
        out.append(f"<div class=\"answer\" data-direction=\"{e(str(cited.get('direction', '')))}\"><p><strong>"
                   f"{e(cited['verdict'])}</strong></p>")
        if _decided_by(cited):
            out.append(f"<p class=\"meta\">{e(_decided_by(cited))}</p>")
        out.append("<ul>")
        for s in cited["sentences"]:
            refs = "".join(f"<a href=\"#i{n}\">[{n}]</a>" for n in s["cites"])
            one = items.get(s["cites"][0]) if len(s["cites"]) == 1 else None
            said = (f"“{_rich(one['text'], one.get('scripts'))}”" if one is not None and s["text"] == f"“{one['text']}”"
                    else e(s["text"]))
            out.append(f"<li>{said} {refs}</li>")
        for entry in cited["left_out"]:
            out.append(f"<li class=\"note\">left out [{entry['item']}]: {e(entry['why'])}</li>")
        for entry in cited["dropped_sentences"]:
            out.append(f"<li class=\"note\">dropped: “{e(entry['text'])}” ({e(entry['why'])})</li>")
        out.append("</ul></div>")
    for n, (head, group) in enumerate(_papers(result), 1):
        flags = " ".join(f"<span class=\"flag\">{e(f)}</span>" for f in _flags(head))
        out.append(f"<h2>{n}. {e(head['title'])} {flags}</h2>")
        anchors = _anchors(head)
        out.append(f"<p class=\"meta\">{e(_byline(head))} · {e(_ids(head))}"
                   f"{' · ' + anchors if anchors else ''}</p><ol>")
        for it in group:
            note = (f"<br><span class=\"note\">not about the question: {e(str(it.get('relevance')))}</span>"
                    if it.get("relevant") is False else "")
            out.append(f"<li id=\"i{it['rank']}\" value=\"{it['rank']}\"><span class=\"stance {e(it['stance'])}\" "
                       f"data-stance=\"{e(it['stance'])}\">{e(badge(it))}</span> <code>{e(it['locator'])}</code><br>"
                       f"{_rich(it['text'], it.get('scripts'))}{note}{_proof(it, checked)}</li>")
        out.append("</ol>")
    withheld = result.get("withheld_retracted") or []
    if withheld:
        out.append(f"<p class=\"note\">Withheld: {plural(len(withheld), 'retracted paper')}: "
                   + ", ".join(e(w["doc_id"]) for w in withheld) + "</p>")
    made = _provenance(result)
    out.append("<p class=\"meta\">Every sentence is a verbatim slice of the pinned paper it names"
               + (f"; made with {made}" if made else "") + ".</p></body></html>")
    return "\n".join(out) + "\n"
