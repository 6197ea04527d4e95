"""A contributor without the real data is told where it goes and how to check a copy (issue 13, item 10)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import skip_message

REPO = Path(__file__).resolve().parents[1]


def test_the_skip_message_says_where_the_data_goes_and_how_to_check_it(tmp_path: Path) -> None:
    message = skip_message(tmp_path / "absent")
    assert "BIOEVIDENCE_SHARED_DATA" in message and "../shared/data" in message
    assert "tools/test_data.py verify" in message


def test_a_clone_without_the_data_skips_with_that_message_and_ci_fails(tmp_path: Path) -> None:
    """Run one real-data test with the data folder pointed elsewhere: a skip naming the fix; under CI, a failure."""
    test = "tests/gate/test_builtin_grounded_profile.py::test_pulled_releases_ground_the_label_with_no_flags"
    env = {k: v for k, v in os.environ.items() if k != "CI"} | {"BIOEVIDENCE_SHARED_DATA": str(tmp_path / "none")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", test], cwd=REPO,
                          env=env, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0 and "SKIPPED [1]" in done.stdout, done.stdout[-2000:]
    assert "tools/test_data.py verify" in done.stdout
    ci = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test], cwd=REPO,
                        env=env | {"CI": "true"}, capture_output=True, text=True, check=False, timeout=300)
    assert ci.returncode == 1 and "tools/test_data.py verify" in ci.stdout, ci.stdout[-2000:]


def test_the_verifier_accepts_the_real_data_and_names_a_changed_file(shared_data: Path, tmp_path: Path) -> None:
    ok = subprocess.run([sys.executable, str(REPO / "tools" / "test_data.py"), "verify", str(shared_data)],
                        capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stdout
    copy = tmp_path / "data"
    for family in ("references",):
        (copy / family).mkdir(parents=True)
        for path in (shared_data / family).iterdir():
            (copy / family / path.name).write_bytes(path.read_bytes())
    (copy / "references" / "MANIFEST.tsv").chmod(0o644)
    target = next(p for p in (copy / "references").iterdir() if p.suffix == ".gz")
    target.chmod(0o644)
    target.write_bytes(target.read_bytes()[:-1])
    bad = subprocess.run([sys.executable, str(REPO / "tools" / "test_data.py"), "verify", str(copy)],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 1
    assert f"references/{target.name}: sha256 differs from the manifest" in bad.stdout
    assert "api_responses/MANIFEST.tsv: missing" in bad.stdout
