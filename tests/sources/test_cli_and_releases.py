"""`bioevidence sources …`, `bioevidence ground` and pinned reference releases."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bioevidence.cli import main
from bioevidence.errors import ConfigurationError, IntegrityError, SourceError
from bioevidence.sources.catalogue import Catalogue
from bioevidence.sources.releases import load_releases, parse_release, pull, release_path
from loopback import LoopbackServer
from sources.replay import serve_civic_ncbi


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_verify_passes_on_the_reference_corpus(shared_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["sources", "verify", str(shared_data / "civic_corpus" / "snapshots")], capsys)
    assert code == 0 and "300 files verified" in out


def test_verify_names_a_flipped_file_and_exits_non_zero(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "snap"
    shutil.copytree(shared_data / "civic_corpus" / "snapshots", copy)
    victim = sorted(copy.glob("*.json.gz"))[0]
    victim.chmod(0o644)
    raw = bytearray(victim.read_bytes())
    raw[-5] ^= 0x80
    victim.write_bytes(bytes(raw))
    missing = sorted(copy.glob("*.xml.gz"))[0]
    missing.chmod(0o644)
    missing.unlink()
    code, out, _ = run(["sources", "verify", str(copy)], capsys)
    assert code == 1
    assert victim.name in out and missing.name.split(".")[0] in out and "missing" in out


def test_verify_of_a_missing_folder_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["sources", "verify", str(tmp_path / "nope")], capsys)
    assert code == 3 and json.loads(err)["error"] == "input_error"


def test_ground_pins_a_record_over_loopback(
    server: LoopbackServer,
    shared_data: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    reference = serve_civic_ncbi(server, shared_data / "civic_corpus" / "snapshots")
    monkeypatch.setenv("BIOEVIDENCE_EUTILS_URL", server.url)
    monkeypatch.setenv("BIOEVIDENCE_HTTP_CACHE", str(tmp_path / "cache"))
    record = {
        "record_id": "bioev:t",
        "source_artifacts": [
            {
                "id": "bioev:s1",
                "source_type": "publication",
                "uri": "pmid:15696205",
                "title": "x",
                "version": "v",
                "retrieved_at": "2026-01-01T00:00:00Z",
                "sha256": "0" * 64,
            },
            {"id": "bioev:s2", "source_type": "publication", "uri": "pmid:99000001"},
            {"id": "bioev:s3", "source_type": "dataset_snapshot", "uri": "https://example.org", "sha256": "1" * 64},
        ],
    }
    src = tmp_path / "record.json"
    src.write_text(json.dumps(record))
    out = tmp_path / "grounded.json"
    code, _, err = run(
        [
            "ground",
            str(src),
            "--snapshot-dir",
            str(tmp_path / "snap"),
            "--output",
            str(out),
            "--email",
            "me@example.org",
        ],
        capsys,
    )
    assert code == 0, err
    assert "pinned 1" in err and "not found 1" in err
    grounded = json.loads(out.read_text())["source_artifacts"]
    ref = reference["pmid:15696205"]
    assert grounded[0]["sha256"] == grounded[0]["observed_sha256"] == ref.fulltext_sha256
    assert grounded[1]["sha256"] == reference["pmid:99000001"].metadata_sha256
    assert grounded[2]["sha256"] == "1" * 64
    assert len(Catalogue.load(tmp_path / "snap")) == 2
    assert "me%40example.org" in json.dumps(server.log) or "me@example.org" in json.dumps(server.log)


def test_ground_refuses_output_over_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "r.json"
    src.write_text("{}")
    code, _, err = run(["ground", str(src), "--snapshot-dir", str(tmp_path), "--output", str(src)], capsys)
    assert code == 3 and "overwrite" in err


def test_declared_releases_load_with_exact_keys(repo: Path) -> None:
    releases = load_releases(repo / "grounders")
    assert {"cl", "hgnc"} <= set(releases)
    assert releases["cl"].version == "2026-06-08" and releases["hgnc"].version == "2026-09-30"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [("name: x\n", "missing"), ("name: cl\nname: cl\n", "duplicate"), ("- 1\n", "mapping")],
    ids=["missing-keys", "duplicate-key", "not-mapping"],
)
def test_bad_declarations_are_refused(text: str, fragment: str) -> None:
    with pytest.raises((ConfigurationError, ValueError)) as info:
        parse_release(text.encode(), file="x.yaml")
    assert fragment in str(info.value)


def test_unknown_key_is_refused(repo: Path) -> None:
    text = (repo / "grounders" / "cl.yaml").read_text() + "homepage: x\n"
    with pytest.raises(ConfigurationError, match="unknown homepage"):
        parse_release(text.encode(), file="cl.yaml")


def test_pull_from_mirror_verifies_and_release_path_finds_it(
    shared_data: Path, repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BIOEVIDENCE_HOME", str(tmp_path / "home"))
    with pytest.raises(SourceError, match="sources pull hgnc"):
        release_path("hgnc", folder=repo / "grounders")
    code, out, _ = run(["sources", "pull", "hgnc", "--from", str(shared_data / "references")], capsys)
    assert code == 0 and "verified" in out
    path = release_path("hgnc", folder=repo / "grounders")
    assert path == tmp_path / "home" / "releases" / "hgnc_complete_set_2026-09-30.tsv.gz"
    code, out, _ = run(["sources", "list"], capsys)
    assert str(path) in out and "not pinned" in out


def test_pull_refuses_a_corrupted_mirror(shared_data: Path, repo: Path, tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    data = bytearray((shared_data / "references" / "cl_2026-06-08.obo.gz").read_bytes())
    data[1000] ^= 1
    (mirror / "cl_2026-06-08.obo.gz").write_bytes(bytes(data))
    with pytest.raises(IntegrityError):
        pull("cl", from_dir=mirror, home=tmp_path / "home", folder=repo / "grounders")
    assert not (tmp_path / "home" / "releases").exists() or not any((tmp_path / "home").rglob("*.gz"))


def test_pull_downloads_over_http_and_verifies(
    server: LoopbackServer, shared_data: Path, repo: Path, tmp_path: Path
) -> None:
    import gzip

    from bioevidence.sources.http import HttpClient, HttpConfig
    from bioevidence.sources.releases import get_release

    release = get_release("cl", repo / "grounders")
    plain = gzip.decompress((shared_data / "references" / "cl_2026-06-08.obo.gz").read_bytes())
    server.route("/cl.obo", plain, content_type="text/plain")
    decl = tmp_path / "decl"
    decl.mkdir()
    text = (repo / "grounders" / "cl.yaml").read_text().replace(release.url, f"{server.url}/cl.obo")
    (decl / "cl.yaml").write_text(text)
    with HttpClient(HttpConfig(max_attempts=1)) as http:
        path = pull("cl", http=http, home=tmp_path / "home", folder=decl)
    assert path.name == "cl_2026-06-08.obo" and release_path("cl", home=tmp_path / "home", folder=decl) == path
