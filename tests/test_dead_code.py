"""No dead code (issue 13, item 12): every function, method and class defined in the package is
named somewhere else (package, tests, tools, action). Click commands are registered by decorator
and name, and so are the web pages' routes and exception handlers (``@router.get``, ``@app.exception_handler``);
protocol methods (``ground``, ``to_dict``) are called by name, so they count as used."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _decorated_as_command(node: ast.AST) -> bool:
    decorators = getattr(node, "decorator_list", [])
    return any(re.search(r"\.(command|group)\b|^click\.|^(app|router)\.(get|post|exception_handler|middleware)\(",
                         ast.unparse(d)) for d in decorators)


def test_every_definition_in_the_package_is_used_somewhere() -> None:
    sources = sorted((REPO / "src").rglob("*.py"))
    corpus = "\n".join(p.read_text(encoding="utf-8") for p in
                       [*sources, *(REPO / "tests").rglob("*.py"), *(REPO / "tools").rglob("*.py")])
    corpus += (REPO / "action.yml").read_text(encoding="utf-8") + (REPO / "pyproject.toml").read_text(encoding="utf-8")
    defined: dict[str, list[str]] = {}
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) \
                    and not node.name.startswith("__") and not _decorated_as_command(node):
                defined.setdefault(node.name, []).append(str(path.relative_to(REPO)))
    words = Counter(re.findall(r"\w+", corpus))  # one pass: a name's uses are the words equal to it
    dead = sorted(f"{places[0]}: {name}" for name, places in defined.items() if words[name] <= len(places))
    assert dead == [], "defined but never used (remove it, or use it):\n" + "\n".join(dead)


def test_one_bm25_engine_serves_the_package() -> None:
    """The librarian's bm25s engine and analyser serve the agent's search tool too (no rank-bm25 beside it)."""
    for path in sorted((REPO / "src").rglob("*.py")):
        assert "rank_bm25" not in path.read_text(encoding="utf-8"), path
