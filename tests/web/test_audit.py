"""The audit page over HTTP: its exports are what `review audit-sample` and `review agreement` read,
its numbers are theirs, an uploaded audit is scored as `review audit-score` scores it, and every label
in its SVG is escaped."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from web_support import PASSWORD, Server, Visitor, cli, hidden, need_web

need_web()

DECISIONS = {  # entry -> (bob, carol)
    11: ("accept", "accept"), 12: ("accept", "reject"), 13: ("reject", "reject"), 14: ("defer", "defer"),
    15: ("accept", "accept"), 16: ("reject", "accept"),
}


def _decide(v: Any, entry: int, decision: str) -> None:
    page = v.get(f"/entries/{entry}")
    response = v.post(f"/entries/{entry}/decide", data={
        "csrf": hidden(page.text, "csrf"), "request_id": hidden(page.text, "request_id"), "decision": decision,
        "rationale": f"{decision} after reading the passage"})
    assert response.status_code == 303, response.text


@pytest.fixture(scope="module")
def decided(server: Server) -> None:
    """Bob and Carol decide entries 11-16 (once for the module)."""
    for name, column in (("bob", 0), ("carol", 1)):
        v = Visitor(server.url)
        try:
            assert v.login(name).status_code == 303
            for entry, pair in DECISIONS.items():
                _decide(v, entry, pair[column])
        finally:
            v.close()


def test_agreement_on_the_page_is_what_review_agreement_computes(decided: None, sign_in: Any,
                                                                 tmp_path: Path) -> None:
    admin = sign_in("alice")
    exported = admin.get("/audit/decisions.csv")
    assert exported.status_code == 200 and exported.headers["content-type"].startswith("text/csv")
    (tmp_path / "decisions.csv").write_text(exported.text)
    result = cli("review", "agreement", tmp_path / "decisions.csv", "--column", "admission_label")
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)["columns"]["admission_label"]
    assert stats["units_with_two_or_more"] == 6
    page = admin.get("/audit").text
    assert f'id="percent-agreement">{100 * stats["percent_agreement"]:.2f}%<' in page
    assert f'id="alpha">{stats["krippendorff_alpha"]:.3f}<' in page
    assert f'class="kappa">{stats["cohen_kappa"]:.3f}<' in page
    by_reviewer = dict(re.findall(r"<tr><td>(orcid:[^<]+|bioevidence-user:[^<]+)</td>(?:<td>\d+</td>){3}<td>(\d+)</td>",
                                  page))
    assert by_reviewer == {"orcid:0000-0001-5109-3700": "6", "bioevidence-user:carol": "6"}


def test_the_predictions_export_feeds_audit_sample_and_the_upload_is_scored_like_audit_score(
        decided: None, sign_in: Any, server: Server, tmp_path: Path) -> None:
    admin = sign_in("alice")
    exported = admin.get("/audit/predictions.csv").text
    rows = list(csv.DictReader(io.StringIO(exported)))
    assert len(rows) == 60 and {r["method"] for r in rows} == {"bioevidence-gate+review"}
    listed = json.loads(cli("review", "list", "--status", "all", "--format", "json", "--queue", server.queue).stdout)
    assert {r["case_id"]: r["predicted_status"] for r in rows} == {f"entry-{e['id']}": e["overall_status"]
                                                                   for e in listed}  # one use each: the route now
    assert "admitted" in {r["predicted_status"] for r in rows}
    (tmp_path / "predictions.csv").write_text(exported)
    sampled = cli("review", "audit-sample", "--predictions", tmp_path / "predictions.csv", "--size", "3",
                  "--controls", "4", "--seed", "7", "--output-dir", tmp_path / "audit")
    assert sampled.returncode == 0, sampled.stderr
    sheet = list(csv.DictReader(io.StringIO((tmp_path / "audit" / "audit_sheet.csv").read_text())))
    for n, row in enumerate(sheet):  # one auditor: agrees with everything but the first case
        row.update(reviewer_id="orcid:auditor", admission_label="rejected" if n == 0 else "review_required",
                   mapping_label="correct", rationale="checked", minutes_spent="3")
    labels = io.StringIO()
    writer = csv.DictWriter(labels, fieldnames=list(sheet[0]))
    writer.writeheader()
    writer.writerows(sheet)
    (tmp_path / "labels.csv").write_text(labels.getvalue())
    scored = cli("review", "audit-score", "--manifest", tmp_path / "audit" / "audit_manifest.json", "--labels",
                 tmp_path / "labels.csv", "--format", "json")
    expected = json.loads(scored.stdout)
    page = admin.get("/audit")
    response = admin.post("/audit/score", data={"csrf": hidden(page.text, "csrf")}, files={
        "manifest": ("audit_manifest.json", (tmp_path / "audit" / "audit_manifest.json").read_bytes()),
        "labels": ("labels.csv", labels.getvalue().encode())})
    assert response.status_code == 200, response.text
    for route in expected["routes"]:
        bound = route["error_rate_upper_bound"]
        shown = re.search(rf'<tr data-route="{route["route"]}">.*?<td class="bound">([^<]+)</td>', response.text)
        assert shown is not None and shown.group(1) == f"{100 * bound:.2f}%"
    assert "error rate per route" in response.text  # the plot with its intervals


def test_a_bad_upload_is_one_message_and_no_csrf_no_score(sign_in: Any) -> None:
    admin = sign_in("alice")
    page = admin.get("/audit")
    bad = admin.post("/audit/score", data={"csrf": hidden(page.text, "csrf")},
                     files={"manifest": ("m.json", b'{"marker": "no"}'), "labels": ("l.csv", b"a,b\n1,2\n")})
    assert bad.status_code == 400 and 'id="score-error"' in bad.text
    refused = admin.post("/audit/score", files={"manifest": ("m.json", b"{}"), "labels": ("l.csv", b"")})
    assert refused.status_code == 403


def test_labels_in_the_charts_are_escaped(sign_in: Any, server: Server) -> None:
    made = cli("users", "add", "mallory", "--role", "reviewer", "--reviewer-id", "<script>alert(1)</script>",
               "--password-stdin", "--queue", server.queue, stdin=PASSWORD + "\n")
    assert made.returncode == 0, made.stderr
    _decide(sign_in("mallory"), 20, "accept")
    page = sign_in("alice").get("/audit").text
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
