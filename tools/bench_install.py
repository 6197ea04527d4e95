"""Install size and cold start of the core install and of each extra (the README's install table).

For each of core, librarian, llm, schema, dask, mcp, web, kb, minilm and all: a fresh venv, ``pip install .[EXTRA]`` (a
wheel of this checkout, not editable), then the venv's size on disk (``du``), its package count
(``pip list``, pip itself and setuptools left out), and the median wall time of five cold runs of
``bioevidence validate`` on one example record, plus the first command of the extra where it has
one. Run by hand: ``python3 tools/bench_install.py [--keep DIR]``; prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXTRAS = ["core", "librarian", "llm", "schema", "dask", "mcp", "web", "kb", "minilm", "all"]
RECORD = REPO / "examples" / "records" / "01_admitted_curated_claim.json"


def run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=False, **kw)  # type: ignore[call-overload]


def cold(cmd: list[str], cwd: Path, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        done = run(cmd, cwd=cwd)
        times.append(time.perf_counter() - start)
        if done.returncode not in (0, 1, 2):
            raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr[-400:]}")
    return statistics.median(times)


def size_mb(path: Path) -> float:
    out = run(["du", "-sk", str(path)]).stdout.split()[0]
    return int(out) / 1024


def measure(extra: str, root: Path, index: Path) -> dict[str, object]:
    venv = root / extra
    run([sys.executable, "-m", "venv", str(venv)])
    target = str(REPO) if extra == "core" else f"{REPO}[{extra}]"
    if extra in ("minilm", "all"):  # as .ci/run: torch's CPU build first, so the extra finds it met
        run([str(venv / "bin" / "pip"), "install", "-q", "torch==2.13.0"])
    done = run([str(venv / "bin" / "pip"), "install", "-q", target])
    if done.returncode != 0:
        raise SystemExit(f"pip install {target} failed: {done.stderr[-800:]}")
    listed = json.loads(run([str(venv / "bin" / "pip"), "list", "--format", "json"]).stdout)
    packages = [p["name"] for p in listed if p["name"].lower() not in ("pip", "setuptools")]
    exe = str(venv / "bin" / "bioevidence")
    row: dict[str, object] = {"extra": extra, "packages": len(packages), "mb": round(size_mb(venv), 1),
                              "validate_s": round(cold([exe, "validate", str(RECORD)], REPO), 3)}
    if extra in ("librarian", "all"):
        row["ask_s"] = round(cold([exe, "ask", "Does BRAF V600E predict response to vemurafenib?", "--index",
                                   str(index)], REPO), 3)
    if extra in ("kb", "minilm"):  # load the extra's model and encode the example papers' chunks
        model = "bge-small-en-v1.5" if extra == "kb" else "all-MiniLM-L6-v2"
        dense = root / f"dense-{extra}"
        script = (f"rm -rf {dense} && {exe} index build {REPO / 'examples' / 'papers'} --index {dense} --dense "
                  f"--dense-model {model}")  # a fresh folder each run: nothing comes from the vector cache
        row["index_build_dense_s"] = round(cold(["sh", "-c", script], REPO, 3), 3)
    if extra in ("llm",):
        row["import_openai_s"] = round(cold([str(venv / "bin" / "python"), "-c", "import openai"], REPO), 3)
    if extra in ("schema",):
        row["schema_generate_s"] = round(cold([exe, "schema", "--generate"], REPO), 3)
    if extra in ("dask",):
        row["scheduler_local_s"] = round(cold([exe, "validate", str(RECORD), "--scheduler", "local:1"], REPO, 3), 3)
    if extra in ("mcp",):  # what `bioevidence mcp` imports before it answers `initialize` (docs/mcp.md)
        row["import_mcp_server_s"] = round(cold([str(venv / "bin" / "python"), "-c", "import mcp.server, uvicorn"],
                                                REPO), 3)
    if extra in ("web",):  # what `serve` imports before it listens
        row["import_web_app_s"] = round(cold([str(venv / "bin" / "python"), "-c",
                                              "import uvicorn, bioevidence.web.app"], REPO), 3)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="Build the venvs here and keep them (default: a temporary folder).")
    parser.add_argument("--only", nargs="*", choices=EXTRAS, help="Measure only these.")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-install-"))
    root.mkdir(parents=True, exist_ok=True)
    index = root / "index"
    if not index.exists():
        built = run([sys.executable, "-m", "bioevidence", "index", "build", str(REPO / "examples" / "papers"),
                     "--index", str(index)])
        if built.returncode != 0:
            raise SystemExit(built.stderr)
    rows = []
    try:
        for extra in args.only or EXTRAS:
            rows.append(measure(extra, root, index))
            print(json.dumps(rows[-1]), file=sys.stderr)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    print("| install | packages | venv size | `validate one.json` cold | the extra's first command |")
    print("|---|---|---|---|---|")
    for r in rows:
        first = next((f"{k.removesuffix('_s').replace('_', ' ')}: {v:.2f} s" for k, v in r.items()
                      if k.endswith("_s") and k != "validate_s"), "–")
        name = "`pip install bioevidence`" if r["extra"] == "core" else f"`bioevidence[{r['extra']}]`"
        print(f"| {name} | {r['packages']} | {r['mb']:.0f} MB | {r['validate_s']:.2f} s | {first} |")


if __name__ == "__main__":
    main()
