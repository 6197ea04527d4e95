"""Parsed articles are cached on disk by the pinned bytes' SHA-256 *and* a fingerprint of the reader
code, so a reader fix takes effect at once: the CIViC case found two reader gaps (front-matter
notes, glossary definitions) whose fix a cache keyed by the bytes alone would have hidden."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from bioevidence.gate.grounders.literature import LiteratureGrounder
from bioevidence.text.fingerprint import READERS, reader_fingerprint


def test_every_module_of_the_text_package_is_in_the_fingerprint() -> None:
    import bioevidence.text.fingerprint as module

    folder = Path(module.__file__).resolve().parent
    modules = {p.name for p in folder.glob("*.py")} - {"__init__.py", "fingerprint.py"}
    assert modules == set(READERS)
    digest = hashlib.sha256()
    for name in READERS:
        digest.update(name.encode() + b"\0" + (folder / name).read_bytes() + b"\0")
    assert reader_fingerprint() == digest.hexdigest()


def test_a_parse_cached_under_another_reader_is_not_read(shared_data: Path, tmp_path: Path) -> None:
    """An entry the cache holds for the same bytes under the plain hash (as before this change) or another
    reader's fingerprint is ignored: the quote is checked against a fresh parse."""
    snaps = shared_data / "civic_corpus" / "snapshots"
    catalogue = json.loads((snaps / "literature.json").read_text())["works"]
    key, work = next((k, w) for k, w in sorted(catalogue.items()) if w.get("fulltext_sha256"))
    sha = work["fulltext_sha256"]
    grounder = LiteratureGrounder.from_directory(snaps, cache_root=tmp_path)
    article = grounder._article(sha)[0]
    assert article.passages
    written = sorted(p.name for p in (tmp_path / "jats").iterdir())
    assert len(written) == 1 and not written[0].startswith(sha)  # keyed by bytes and reader together
    stale = (tmp_path / "jats" / written[0]).read_bytes()
    # the stale slot of the old keying holds an empty article: never read
    import marshal

    from bioevidence.gate.grounders.quotes import FORMAT_VERSION, article_to_plain
    from bioevidence.text.jats import Article

    empty = marshal.dumps(article_to_plain(Article(title="", passages=())))
    (tmp_path / "jats" / f"{sha}.v{FORMAT_VERSION}.marshal").write_bytes(empty)
    again = LiteratureGrounder.from_directory(snaps, cache_root=tmp_path)._article(sha)[0]
    assert [p.text for p in again.passages] == [p.text for p in article.passages]
    assert (tmp_path / "jats" / written[0]).read_bytes() == stale
    assert key.startswith("pmid:")
