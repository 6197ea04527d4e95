"""Resource limits against hostile input: one table of defaults, each overridable by environment.

* ``max_inflated`` (``BIOEVIDENCE_MAX_INFLATED``, default 256 MiB; ``--max-inflated`` on
  ``validate`` and ``sources verify``): the bytes one pinned object, ontology, gene set or
  release may hold once decompressed. Gzip is inflated as a stream and hashed while streaming,
  so a bomb is refused after at most this many bytes, never inflated whole.
* ``yaml_max_aliases`` (``BIOEVIDENCE_YAML_MAX_ALIASES``, default 100): ``*alias`` uses in one
  YAML document.
* ``yaml_max_expansion`` (``BIOEVIDENCE_YAML_MAX_EXPANSION``, default 10000): nodes that alias
  expansion may add to one YAML document (a "billion laughs" file adds billions).
* ``json_max_nodes`` (``BIOEVIDENCE_JSON_MAX_NODES``, default 4,000,000) and ``yaml_max_nodes``
  (``BIOEVIDENCE_YAML_MAX_NODES``, default 100,000): values (keys, scalars, lists, objects) one JSON
  or YAML document may hold. Counted before they are built: JSON by a scan of its text, YAML as the
  parser composes it, so the cost of a refused file is bounded by the limit, not by the 50 MB cap
  (a 1.5 MB YAML list of 375,000 items took 13 s and 300 MB; 30 MB of JSON integers aborted Python).
* ``http_deadline`` (``BIOEVIDENCE_HTTP_DEADLINE``, default 120 s; ``--http-deadline`` on
  ``ground``): one HTTP request, every attempt, read and backoff wait included.

CPUs (:func:`usable_cpus`): what this process is allowed to run on, not what the machine has; every
default count of workers or threads starts from it.

Fixed limits (not configurable): one record (a file, or a JSONL line) of at most 50 MB (``io.MAX_BYTES``),
JSON/YAML nesting of at most 100 levels (``io.MAX_DEPTH``). Sizes are written as bytes or
with a suffix (``512K``, ``256M``, ``1G``; binary multiples). Functions take the limit as an
explicit argument; ``None`` means "the environment's value, else the default", read when the
function runs (so a flag always wins over the environment).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from .errors import ConfigurationError

__all__ = ["LIMITS", "Limit", "format_size", "limit", "parse_size", "size_limit", "usable_cpus"]


@dataclass(frozen=True, slots=True)
class Limit:
    name: str
    env: str
    default: float
    kind: str  # size | count | seconds
    flag: str | None = None


LIMITS: dict[str, Limit] = {
    item.name: item
    for item in (
        Limit("max_inflated", "BIOEVIDENCE_MAX_INFLATED", 256 * 1024 * 1024, "size", "--max-inflated"),
        Limit("yaml_max_aliases", "BIOEVIDENCE_YAML_MAX_ALIASES", 100, "count"),
        Limit("yaml_max_expansion", "BIOEVIDENCE_YAML_MAX_EXPANSION", 10_000, "count"),
        Limit("http_deadline", "BIOEVIDENCE_HTTP_DEADLINE", 120.0, "seconds", "--http-deadline"),
        Limit("json_max_nodes", "BIOEVIDENCE_JSON_MAX_NODES", 4_000_000, "count"),
        Limit("yaml_max_nodes", "BIOEVIDENCE_YAML_MAX_NODES", 100_000, "count"),
    )
}

_SIZE = re.compile(r"^\s*(\d+)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def parse_size(text: str, *, what: str = "size") -> int:
    """``"256M"`` -> 268435456; a positive byte count with an optional K/M/G/T suffix."""
    match = _SIZE.match(str(text))
    if match is None or int(match.group(1)) <= 0:
        raise ConfigurationError(f"{what} {text!r} is not a positive size; write bytes or e.g. 512K, 256M, 1G")
    return int(match.group(1)) * _UNITS[match.group(2).lower()]


def format_size(value: float) -> str:
    """``268435456`` -> ``"256 MiB"`` (exact binary multiples only; else bytes)."""
    for unit, factor in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if value >= factor and value % factor == 0:
            return f"{int(value // factor)} {unit}"
    return f"{int(value)} bytes"


def limit(name: str, environ: Mapping[str, str] | None = None) -> float:
    """The value of limit ``name``: its environment variable when set (validated), else the default."""
    spec = LIMITS[name]
    raw = (os.environ if environ is None else environ).get(spec.env, "").strip()
    if not raw:
        return spec.default
    if spec.kind == "size":
        return parse_size(raw, what=spec.env)
    try:
        value = float(raw) if spec.kind == "seconds" else int(raw)
    except ValueError:
        value = -1
    if value <= 0:
        raise ConfigurationError(f"{spec.env}={raw!r} must be a positive "
                                 f"{'number of seconds' if spec.kind == 'seconds' else 'whole number'}")
    return value


def size_limit(name: str, value: int | None = None) -> int:
    """An explicit size when given, else :func:`limit` as an int."""
    return int(value) if value is not None else int(limit(name))


def usable_cpus() -> int:
    """The CPUs this process may use: its affinity mask (``taskset``, a cgroup cpuset, SLURM's CPU
    binding), capped by a SLURM allocation (``SLURM_CPUS_PER_TASK``) and a cgroup v2 CPU quota
    (``cpu.max``) when they are smaller. ``os.cpu_count()`` counts the node, so an ``sbatch -c 1``
    job on a 64-core node would otherwise start 64 workers on one CPU."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    slurm = os.environ.get("SLURM_CPUS_PER_TASK", "").strip()
    if slurm.isdigit() and int(slurm) > 0:
        n = min(n, int(slurm))
    try:
        quota, period = open("/sys/fs/cgroup/cpu.max", encoding="ascii").read().split()[:2]  # noqa: SIM115
        if quota != "max" and int(period) > 0:
            n = min(n, max(1, int(quota) // int(period)))
    except (OSError, ValueError):
        pass
    return max(1, n)
