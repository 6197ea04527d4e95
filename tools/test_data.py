"""Check a copy of the real test data (``../shared/data``) against its manifests.

The real-data tests read a folder of public data (JATS full texts, recorded API responses,
reference releases, the pinned CIViC corpus...) that lives beside the clone, not in it: several
files are under licences (CC BY-NC, no licence file) that forbid bundling them here. Each of its
eight families has a ``MANIFEST.tsv`` naming every file's SHA-256, source repository, path and
commit, so a copy got from a colleague, a CI cache or the sources themselves can be checked:

    python3 tools/test_data.py verify ../shared/data        # exit 0 when every listed file matches
    BIOEVIDENCE_SHARED_DATA=/path/to/data .venv/bin/python -m pytest

Prints one line per missing or different file, then a summary.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import sys
from pathlib import Path

FAMILIES = ("api_responses", "civic_corpus", "claims", "hgnc", "jats", "ontologies", "references", "retractions")


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify(root: Path) -> list[str]:
    """Problems found (empty when every file each manifest lists is there with its hash)."""
    problems = []
    for family in FAMILIES:
        manifest = root / family / "MANIFEST.tsv"
        if not manifest.is_file():
            problems.append(f"{family}/MANIFEST.tsv: missing")
            continue
        with manifest.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
                path = root / family / row["file"]
                if not path.is_file():
                    problems.append(f"{family}/{row['file']}: missing")
                elif sha256(path) != row["sha256"]:
                    problems.append(f"{family}/{row['file']}: sha256 differs from the manifest")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["verify"])
    parser.add_argument("folder", type=Path)
    args = parser.parse_args()
    problems = verify(args.folder)
    for line in problems:
        print(line)
    print(f"{'ok' if not problems else 'FAILED'}: {args.folder} ({len(problems)} problem(s))",
          file=sys.stderr if problems else sys.stdout)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
