"""How the security tests attack: the real ``bioevidence`` in a subprocess, under resource limits, measured.

* :func:`run_cli` runs ``python -m bioevidence ARGS`` (through ``launch.py``, so the memory
  figures are the child's own) with a CPU-time limit (``RLIMIT_CPU``: a
  runaway parse is killed by SIGXCPU instead of hanging the suite), an optional address-space
  limit (``RLIMIT_AS``: a bomb that needs gigabytes fails instead of swapping the machine),
  optionally without the power to read any file (``honour_permissions``: as root, the child
  loses CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH through ``setpriv``, so a ``chmod 000`` file is
  really unreadable to it, as it is to an ordinary user), and
  reports the exit code, output, and the child's peak resident memory and CPU time from
  ``wait4``: figures measured by the kernel, not wall-clock guesses.
* :func:`gzip_bomb` writes a real gzip file of zeros that inflates to a chosen size: one
  compressed member repeated (a multi-member file is valid gzip, as ``gzip -d`` and Python read it),
  so a 1 GiB bomb costs about 1 MB on disk and milliseconds to make.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

MB = 1024 * 1024
LAUNCHER = Path(__file__).with_name("launch.py")


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str
    peak_rss_mb: float
    cpu_seconds: float
    killed: bool  # the wall-clock watchdog had to kill it (it hung)

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.stderr


def can_honour_permissions() -> bool:
    """Whether a child can be made to honour file permissions (not root, or root with ``setpriv``)."""
    return os.geteuid() != 0 or shutil.which("setpriv") is not None


def run_cli(args: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None, cpu_seconds: int = 60,
            address_space_mb: int | None = None, honour_permissions: bool = False, stdin: bytes | None = None,
            watchdog: float = 180.0) -> Run:
    """Run the CLI in a child process under limits (see the module docstring)."""
    environment = {**os.environ, **(env or {})}
    command = [sys.executable, "-m", "bioevidence", *args]
    if honour_permissions and os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv is not None, "as root, honour_permissions needs setpriv (util-linux)"
        command = [setpriv, "--bounding-set", "-dac_override,-dac_read_search", *command]

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        account = folder / "account.json"
        launcher = [sys.executable, str(LAUNCHER), str(account), str(cpu_seconds), str(address_space_mb or 0), "--"]
        (folder / "stdin").write_bytes(stdin or b"")
        with (folder / "stdin").open("rb") as given, (folder / "out").open("wb") as out, \
                (folder / "err").open("wb") as err:
            proc = subprocess.Popen([*launcher, *command], cwd=cwd, env=environment, stdin=given, stdout=out,
                                    stderr=err, start_new_session=True)
            killed = threading.Event()

            def kill() -> None:
                killed.set()
                os.killpg(proc.pid, signal.SIGKILL)

            timer = threading.Timer(watchdog, kill)
            timer.start()
            try:
                proc.wait()
            finally:
                timer.cancel()
        stdout = (folder / "out").read_bytes().decode("utf-8", "replace")
        stderr = (folder / "err").read_bytes().decode("utf-8", "replace")
        if not account.exists():
            return Run(-9, stdout, stderr, 0.0, 0.0, killed.is_set())
        facts = json.loads(account.read_text(encoding="utf-8"))
        return Run(os.waitstatus_to_exitcode(facts["status"]), stdout, stderr, facts["maxrss_kb"] / 1024,
                   facts["cpu_seconds"], killed.is_set())


def gzip_bomb(path: Path, inflated: int, *, member: int = MB) -> int:
    """Write a gzip file of zeros inflating to ``inflated`` bytes (a multiple of ``member``); its size on disk."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # wbits 31: a gzip member
    one = packer.compress(bytes(member)) + packer.flush()
    with path.open("wb") as handle:
        for _ in range(inflated // member):
            handle.write(one)
    return path.stat().st_size
