"""Model servers for tests: a replaying OpenAI chat server, and the real local Gemma 270M.

* :class:`ChatReplayServer`: a :class:`~loopback.LoopbackServer` that speaks the OpenAI chat
  completions protocol on 127.0.0.1 and answers with canned reply texts in order (fault
  injection as in ``loopback``). It keeps every request body, so tests can check what was
  sent (response_format, temperature of the retry, the error stated in the retry prompt).
* :class:`LocalModel`: starts ``llama_cpp.server`` with the Gemma 3 270M GGUF on a free port
  (127.0.0.1 only), waits for ``/v1/models`` within a time box, and stops it. The model and
  server are installed by ``python3 tools/model.py install`` (``.ci/run`` does it); when they
  are absent the tests skip, except under CI (``CI=true``) where that is a failure.
  ``BIOEVIDENCE_MODEL_URL`` points the tests at an already running server instead.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from loopback import LoopbackServer, Reply

REPO = Path(__file__).resolve().parents[1]
CHAT = "/v1/chat/completions"

__all__ = ["CHAT", "ChatReplayServer", "LocalModel", "completion", "model_unavailable"]


def completion(text: str, *, model: str = "replay", prompt_tokens: int = 11, completion_tokens: int = 7,
               finish_reason: str = "stop") -> bytes:
    """An OpenAI chat completion body whose first choice says ``text``."""
    return json.dumps({
        "id": "chatcmpl-replay", "object": "chat.completion", "created": 1_700_000_000, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }).encode()


class ChatReplayServer(LoopbackServer):
    """Replays reply texts (or callables of the request body) in order; the last one repeats."""

    def __init__(self, replies: Iterable[str | Callable[[dict[str, Any]], str | Reply]] = (), *,
                 latency: float = 0.0) -> None:
        self.bodies: list[dict[str, Any]] = []
        self._replies = list(replies)
        super().__init__(latency=latency)
        self.route(CHAT, self._answer, content_type="application/json")
        self.route("/v1/models", json.dumps({"object": "list", "data": [{"id": "replay", "object": "model"}]})
                   .encode(), content_type="application/json")

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def reply(self, *texts: str | Callable[[dict[str, Any]], str | Reply]) -> None:
        self._replies.extend(texts)

    def _answer(self, _query: dict[str, str]) -> Reply | bytes:
        body = self.bodies[-1] if self.bodies else {}
        if not self._replies:
            return Reply(500, b'{"error": {"message": "no canned reply left"}}', "application/json")
        nxt = self._replies.pop(0) if len(self._replies) > 1 else self._replies[0]
        out = nxt(body) if callable(nxt) else nxt
        reply = out if isinstance(out, Reply) else Reply(200, completion(out, model=str(body.get("model", "replay"))),
                                                         "application/json")
        # Connection: close, so the client drops its socket now: an OpenAI client a test does not
        # close otherwise keeps a pooled socket until a later garbage collection, whose
        # ResourceWarning then fails whichever test happens to run (seen under pytest-xdist).
        return dataclasses.replace(reply, headers={**reply.headers, "Connection": "close"})

    def _handler_class(self) -> type:
        base = super()._handler_class()
        server = self

        class _Handler(base):  # type: ignore[misc, valid-type]
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    server.bodies.append(json.loads(raw or b"{}"))
                except ValueError:
                    server.bodies.append({"_raw": raw.decode("utf-8", "replace")})
                server._serve(self)

        return _Handler


# ----------------------------------------------------------------------------- the real model
def _model_python() -> Path:
    env = os.environ.get("BIOEVIDENCE_MODEL_PYTHON")
    return Path(env) if env else REPO / ".ci" / "cache" / "model-venv" / "bin" / "python"


def _gguf() -> Path:
    env = os.environ.get("BIOEVIDENCE_MODEL_GGUF")
    return Path(env) if env else REPO / ".ci" / "cache" / "models" / "gemma-3-270m-q4_k_m.gguf"


def model_unavailable() -> str | None:
    """Why the real model cannot be started here (None when it can)."""
    if os.environ.get("BIOEVIDENCE_MODEL_URL"):
        return None
    py, gguf = _model_python(), _gguf()
    if not py.exists():
        return f"model venv {py.parent.parent} is absent: run python3 tools/model.py install"
    if not gguf.exists():
        return f"model file {gguf} is absent: run python3 tools/model.py install"
    return None


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the server gets SIGKILL when the test process dies, so a killed run leaks no server."""
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalModel:
    """The real Gemma 3 270M behind llama-cpp-python's OpenAI server, for one test session."""

    name = "gemma-3-270m"

    def __init__(self, *, startup_timeout: float = 120.0, n_ctx: int = 8192, log_path: Path | None = None,
                 threads: int | None = None) -> None:
        self.startup_timeout = startup_timeout
        self.n_ctx = n_ctx
        # One thread by default: llama.cpp's threads spin at barriers, so two 2-thread servers (or a
        # server beside another busy process) on 2 cores slow to a crawl; one thread stays near full speed.
        self.threads = threads or int(os.environ.get("BIOEVIDENCE_MODEL_THREADS", "1"))
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self.base_url = os.environ.get("BIOEVIDENCE_MODEL_URL", "").rstrip("/")
        self.startup_seconds = 0.0

    def __enter__(self) -> LocalModel:
        if self.base_url:
            self._wait()
            return self
        port = _free_port()
        self.base_url = f"http://127.0.0.1:{port}/v1"
        # The GGUF (the base model) carries no chat template: use Gemma's turn format, not llama-2's.
        cmd = [str(_model_python()), "-m", "llama_cpp.server", "--model", str(_gguf()), "--model_alias", self.name,
               "--chat_format", "gemma", "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(self.n_ctx),
               "--n_threads", str(self.threads), "--n_batch", "512", "--verbose", "False"]
        if self.log_path is not None:
            with self.log_path.open("wb") as out:  # the child keeps its own descriptor
                self.process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                                preexec_fn=_die_with_parent)
        else:
            self.process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
        try:
            self._wait()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _wait(self) -> None:
        start = time.perf_counter()
        deadline = start + self.startup_timeout
        last = ""
        while time.perf_counter() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"the model server exited with code {self.process.returncode} while starting "
                                   f"(log: {self.log_path})")
            try:
                with urllib.request.urlopen(self.base_url + "/models", timeout=2) as resp:
                    if resp.status == 200:
                        self.startup_seconds = time.perf_counter() - start
                        return
            except (urllib.error.URLError, OSError) as exc:
                last = str(exc)
            time.sleep(0.25)
        raise TimeoutError(f"the model server at {self.base_url} did not answer within "
                           f"{self.startup_timeout:g} s ({last})")

    def __exit__(self, *exc: object) -> None:
        proc, self.process = self.process, None
        if proc is None:
            return
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


if __name__ == "__main__":  # pragma: no cover - manual: serve until Ctrl-C
    with LocalModel(log_path=Path("/tmp/bioevidence-model.log")) as model:
        print(model.base_url, f"(started in {model.startup_seconds:.1f} s)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            sys.exit(0)
