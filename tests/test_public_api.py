"""The public surface: one sorted ``__all__``, every name importable, and cheap imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import bioevidence

REPO = Path(__file__).resolve().parents[1]


def test_all_is_sorted_and_every_name_resolves() -> None:
    assert bioevidence.__all__ == sorted(bioevidence.__all__)
    for name in bioevidence.__all__:
        assert getattr(bioevidence, name) is not None


def test_exceptions_share_one_root_and_builtin_families() -> None:
    from bioevidence import errors

    for cls in (errors.InputError, errors.ConfigurationError, errors.SourceError, errors.IntegrityError,
                errors.RetrievalError, errors.ModelError, errors.LimitError, errors.SourceAccessError,
                errors.ClusterError, errors.BusyError):
        assert issubclass(cls, bioevidence.BioevidenceError)
    assert issubclass(errors.InputError, ValueError) and issubclass(errors.SourceError, OSError)
    assert issubclass(errors.LimitError, errors.InputError) and issubclass(errors.SourceAccessError, OSError)
    assert not issubclass(errors.SourceAccessError, errors.SourceError)  # never read as "not pinned"
    assert issubclass(errors.RetrievalError, OSError) and issubclass(errors.ModelError, RuntimeError)
    assert issubclass(errors.ClusterError, RuntimeError) and issubclass(errors.BusyError, RuntimeError)


HEAVY = ("lxml", "pronto", "linkml_runtime", "openai", "httpx", "jsonschema", "rich", "numpy", "dask", "distributed",
         "fastapi", "starlette", "uvicorn", "argon2", "jinja2", "torch", "sentence_transformers", "transformers",
         "bibtexparser", "pyoxigraph")


def _imported_after(code: str) -> set[str]:
    probe = f"import sys; {code}; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False, cwd=REPO).stdout
    return {name.split(".")[0] for name in out.split()}


def test_import_bioevidence_pulls_in_no_heavy_library() -> None:
    assert _imported_after("import bioevidence") & set(HEAVY) == set()


def test_cli_help_and_validate_stay_light() -> None:
    loaded = _imported_after("from bioevidence.cli import main; main(['--help'])")
    assert loaded & set(HEAVY) == set()
    loaded = _imported_after("from bioevidence.cli import main; main(['validate', 'examples/records'])")
    assert loaded & set(HEAVY) == set()


def test_kb_help_does_not_load_the_model_stack() -> None:
    """`bioevidence kb --help` and `kg2bib --help` import neither torch nor the model (issue 14)."""
    for command in ("kb", "kg2bib"):
        loaded = _imported_after(f"from bioevidence.cli import main; main(['{command}', '--help'])")
        assert loaded & {"torch", "sentence_transformers", "transformers", "numpy", "bibtexparser"} == set()
