"""Start one command under resource limits and write the kernel's account of it (used by ``harness.py``).

``python launch.py REPORT CPU_SECONDS AS_MB -- COMMAND...`` forks from this small process, applies
``RLIMIT_CPU`` (and ``RLIMIT_AS`` unless AS_MB is 0) in the child, execs COMMAND, waits with
``wait4`` and writes ``{"status", "maxrss_kb", "cpu_seconds"}`` as JSON to REPORT.

Why a launcher: ``ru_maxrss`` of a child forked straight from the test runner counts the runner's
pages the child shares between fork and exec (hundreds of MB late in a test session), so it would
measure pytest, not bioevidence. Forked from here, the child starts at this script's ~10 MB.
"""

import json
import os
import resource
import sys


def main() -> None:
    report, cpu, memory = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    command = sys.argv[sys.argv.index("--") + 1:]
    pid = os.fork()
    if pid == 0:
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
            if memory > 0:
                resource.setrlimit(resource.RLIMIT_AS, (memory * 1024 * 1024, memory * 1024 * 1024))
            os.execvp(command[0], command)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    with open(report, "w", encoding="utf-8") as handle:
        json.dump({"status": status, "maxrss_kb": usage.ru_maxrss,
                   "cpu_seconds": usage.ru_utime + usage.ru_stime}, handle)


if __name__ == "__main__":
    main()
