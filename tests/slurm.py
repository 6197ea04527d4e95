"""A real single-node SLURM for the cluster tests: ``munged``, ``slurmctld`` and ``slurmd`` (Debian's
slurm-wlm 22.05 and munge) started in a temporary folder on 127.0.0.1, with their own key, ports,
state and logs, so nothing of the machine's own configuration is read or changed.

``sbatch``, ``squeue`` and ``scancel`` reach it through ``SLURM_CONF``, which :func:`single_node_slurm`
sets in ``os.environ`` while it runs (dask-jobqueue's ``SLURMCluster`` calls ``sbatch`` itself).
Without the daemons (``apt-get install slurmctld slurmd slurm-client munge``) or without root (slurmd
starts jobs as their user), the tests skip with that message; under CI (``CI=true``) they fail.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

DAEMONS = ("munged", "mungekey", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo")
INSTALL = "apt-get install slurmctld slurmd slurm-client munge"


def need_slurm() -> None:
    missing = [name for name in DAEMONS if shutil.which(name) is None
               and not Path("/usr/sbin", name).exists()]
    message = ""
    if missing:
        message = f"SLURM is not installed ({', '.join(missing)} missing); {INSTALL} to run the SLURM tests"
    elif os.geteuid() != 0:
        message = "the single-node SLURM needs root (slurmd starts each job as its user); run the SLURM tests as root"
    if message:
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def _exe(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _node_line(host: str) -> str:
    """This machine's node definition as slurmd reads it (``slurmd -C``: CPUs, memory), on loopback."""
    found = subprocess.run([_exe("slurmd"), "-C"], capture_output=True, text=True, check=True, timeout=60)
    first = found.stdout.splitlines()[0].split()
    keep = [w for w in first if w.split("=", 1)[0] in ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket",
                                                       "ThreadsPerCore", "RealMemory")]
    return " ".join([f"NodeName={host}", "NodeAddr=127.0.0.1", *keep, "State=UNKNOWN"])


def _conf(root: Path, host: str, munge_socket: Path) -> str:
    ctld, slurmd = _free_ports(2)
    return "\n".join([
        "ClusterName=bioevidence-test",
        f"SlurmctldHost={host}(127.0.0.1)",
        f"SlurmctldPort={ctld}",
        f"SlurmdPort={slurmd}",
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        f"AuthInfo=socket={munge_socket}",
        "CredType=cred/munge",
        f"StateSaveLocation={root / 'state'}",
        f"SlurmdSpoolDir={root / 'spool'}",
        f"SlurmctldPidFile={root / 'slurmctld.pid'}",
        f"SlurmdPidFile={root / 'slurmd.pid'}",
        f"SlurmctldLogFile={root / 'slurmctld.log'}",
        f"SlurmdLogFile={root / 'slurmd.log'}",
        "ProctrackType=proctrack/linuxproc",  # no cgroups: the sandbox's are not ours to configure
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_CPU_Memory",
        "MpiDefault=none",
        "SwitchType=switch/none",
        "ReturnToService=2",
        "SchedulerType=sched/backfill",
        "SchedulerParameters=sched_interval=1",
        "KillWait=5",
        _node_line(host),
        "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        "",
    ])


def _wait(what: str, ok: object, root: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if callable(ok) and ok():
            return
        time.sleep(0.5)
    logs = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}"
                     for p in sorted(root.glob("*.log")) if p.is_file())
    raise AssertionError(f"the test SLURM: {what} not within {seconds:g} s\n{logs}")


def node_state() -> str:
    found = subprocess.run([_exe("sinfo"), "-h", "-o", "%T"], capture_output=True, text=True, timeout=30, check=False)
    return found.stdout.strip()


def jobs() -> list[str]:
    """Job ids SLURM still holds (pending or running)."""
    found = subprocess.run([_exe("squeue"), "-h", "-o", "%i"], capture_output=True, text=True, timeout=30, check=False)
    return found.stdout.split()


@contextmanager
def single_node_slurm(root: Path) -> Iterator[Path]:
    """munged + slurmctld + slurmd in ``root``, one idle node; yields the ``slurm.conf`` path (also in
    ``os.environ['SLURM_CONF']`` until the end). Every job is cancelled and every daemon stopped after."""
    need_slurm()
    root.mkdir(parents=True, exist_ok=True)
    for sub in ("munge", "state", "spool"):
        (root / sub).mkdir(exist_ok=True)
    (root / "munge").chmod(0o711)
    key, munge_socket = root / "munge" / "munge.key", root / "munge" / "munge.sock"
    subprocess.run([_exe("mungekey"), "--create", "--keyfile", str(key)], check=True, timeout=60)
    key.chmod(0o400)
    host = socket.gethostname().split(".")[0]
    conf = root / "slurm.conf"
    conf.write_text(_conf(root, host, munge_socket))
    previous = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = str(conf)
    daemons: list[subprocess.Popen[bytes]] = []
    try:
        daemons.append(subprocess.Popen(
            [_exe("munged"), "--foreground", "--force", f"--socket={munge_socket}", f"--key-file={key}",
             f"--log-file={root / 'munged.log'}", f"--pid-file={root / 'munge' / 'munged.pid'}",
             f"--seed-file={root / 'munge' / 'munged.seed'}"]))
        _wait("munged's socket", munge_socket.exists, root)
        daemons.append(subprocess.Popen([_exe("slurmctld"), "-D", "-i", "-f", str(conf)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        _wait("slurmctld answering", lambda: bool(node_state()), root)
        daemons.append(subprocess.Popen([_exe("slurmd"), "-D", "-f", str(conf), "-N", host],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        _wait("the node idle", lambda: node_state() == "idle", root)
        yield conf
    finally:
        if daemons[1:]:
            subprocess.run([_exe("scancel"), "--full", "--user", "root"], timeout=30, check=False,
                           capture_output=True)
            deadline = time.monotonic() + 30
            while jobs() and time.monotonic() < deadline:
                time.sleep(0.5)
        for proc in reversed(daemons):
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if previous is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = previous
