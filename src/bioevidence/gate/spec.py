"""``GateSpec``: what a worker needs to load the same gate as this process, as plain data.

A :class:`~bioevidence.gate.validator.Validator` holds loaded grounder indexes and cannot travel
to another machine; a ``GateSpec`` can. It holds the loaded profile (plain data with its
SHA-256; ``None``: each record's ``profile_id`` among the built-ins) and the grounder options
with every path made absolute (a store and releases shared by every worker). Its ``key`` is the
SHA-256 of the bioevidence version, the profile's SHA-256, the options and the bytes of every
file they name (the catalogue of a snapshot folder; the store itself is content-addressed), so a
worker loads each gate once and a changed release is never served from a stale one.

>>> spec = GateSpec.of("literature-claim", GrounderOptions(snapshot_dir=Path("snapshots")))  # doctest: +SKIP
>>> run(jobs, spec, scheduler="local:2")  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from .._version import __version__
from ..errors import ConfigurationError
from .grounders.config import GrounderOptions, options_from_profile
from .profiles import Profile, load_profile
from .validator import Validator

__all__ = ["GateSpec"]


def _absolute(options: GrounderOptions) -> GrounderOptions:
    def one(p: Path | None) -> Path | None:
        return Path(p).resolve() if p is not None else None

    return dataclasses.replace(
        options, snapshot_dir=one(options.snapshot_dir),
        ontologies=tuple(Path(p).resolve() for p in options.ontologies),
        genes=tuple(Path(p).resolve() for p in options.genes),
        assembly_reports=tuple(Path(p).resolve() for p in options.assembly_reports),
        reference=one(options.reference), cache_root=one(options.cache_root))


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                h.update(chunk)
    except OSError as exc:
        raise ConfigurationError(f"cannot read {path}: {exc.strerror}; check the grounder options",
                                 path=str(path)) from exc
    return h.hexdigest()


@dataclass(frozen=True)
class GateSpec:
    """A profile and grounder options that any process can load into the same ``Validator``."""

    profile: Profile | None = None
    grounders: GrounderOptions | None = None
    grounding: bool = True  # False: --no-grounding (publication evidence accepted unchecked, as 0.8.0)
    cues: bool | None = None  # --cues / --no-cues (None: each record's profile decides)
    direction: str | None = None  # --direction auto|required|off (None: each record's profile decides)

    @classmethod
    def of(cls, profile: str | Path | Profile | None = None, grounders: GrounderOptions | None = None, *,
           grounding: bool = True, cues: bool | None = None, direction: str | None = None) -> GateSpec:
        """Load the profile here (errors surface before any work is sent) and fix the grounder
        options: the given ones, else the profile's ``grounders:`` section, paths made absolute."""
        loaded = load_profile(profile) if isinstance(profile, str | Path) else profile
        if grounding and grounders is None and loaded is not None and loaded.grounders:
            base = loaded.path.parent if loaded.path is not None else None
            grounders = options_from_profile(loaded.grounders, base=base)
        if not grounding and grounders is not None:
            raise ConfigurationError("grounding=False (--no-grounding) turns grounding off; pass no grounders with it")
        return cls(loaded, _absolute(grounders) if grounders is not None else None, grounding, cues, direction)

    @cached_property
    def key(self) -> str:
        options: dict[str, Any] = {}
        files: list[str] = []
        if self.grounders is not None:
            options = {k: ([str(x) for x in v] if isinstance(v, tuple) else dict(v) if isinstance(v, dict)
                           else str(v) if isinstance(v, Path) else v)
                       for k, v in dataclasses.asdict(self.grounders).items()}
            g = self.grounders
            named = [*g.ontologies, *g.genes, *g.assembly_reports, *([g.reference] if g.reference else [])]
            if g.snapshot_dir is not None and (g.snapshot_dir / "literature.json").is_file():
                named.append(g.snapshot_dir / "literature.json")
            files = [f"{p}={_file_sha256(p)}" for p in named]
        text = json.dumps({"version": __version__, "profile": self.profile.sha256 if self.profile else None,
                           "options": options, "files": files, "grounding": self.grounding, "cues": self.cues,
                           "direction": self.direction}, sort_keys=True,
                          default=str)
        return hashlib.sha256(text.encode()).hexdigest()

    def load(self) -> Validator:
        from .grounders.config import build_checks, build_grounders

        return Validator(self.profile, grounders=build_grounders(self.grounders) if self.grounders else [],
                         grounding=self.grounding,
                         checks=build_checks(GrounderOptions(cues=self.cues, direction=self.direction)))
