"""The stage objects a server holds: the gate (validators sharing one set of grounders), the
literature grounder behind it, and the librarian, built from a :class:`ServerConfig`.

Tool calls run on worker threads; the gate and the librarian each sit behind a lock, so a
grounder's caches and the index are used by one call at a time. ``ground`` swaps in a gate
that sees the newly pinned works (:meth:`Services.reload`) under the same lock.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError, InputError, excerpt
from .config import ServerConfig


class Services:
    """Loaded once per server; every tool goes through it."""

    def __init__(self, config: ServerConfig) -> None:
        from ..gate.profiles import load_profile

        self.config = config
        self.gate_lock = threading.RLock()
        self.ask_lock = threading.Lock()
        self.ground_lock = threading.Lock()
        # configured profiles, by id and by file stem (a tool names one of these or a built-in)
        self._named: dict[str, Any] = {}
        self.default_profile: Any = None
        for entry in config.profiles:
            profile = load_profile(entry)
            self.default_profile = self.default_profile or profile
            self._named.setdefault(profile.id, profile)
            if profile.path is not None:
                self._named.setdefault(profile.path.stem, profile)
        self._validators: dict[str, Any] = {}
        self.grounders: list[Any] = self._build_grounders()
        self._librarian: Any = None
        self._llm: Any = None

    # -- the gate ---------------------------------------------------------------------------------
    def _build_grounders(self) -> list[Any]:
        options = self.config.grounders
        if options is None:
            return []
        from ..gate.grounders.config import build_grounders

        return build_grounders(options)

    def reload(self) -> None:
        """Rebuild the grounders (the catalogue changed) and drop the validators built on the old ones."""
        with self.gate_lock:
            self.grounders = self._build_grounders()
            self._validators.clear()

    def profile_names(self) -> list[str]:
        """Names a tool's ``profile`` argument accepts: the built-ins and the configured profiles."""
        from ..gate.profiles import builtin_profiles

        return sorted({*builtin_profiles(), *self._named})

    def profile(self, name: str | None) -> Any:
        """The profile a tool asked for by name (``None``: the server's default, possibly none)."""
        if name is None:
            return self.default_profile
        if name in self._named:
            return self._named[name]
        from ..gate.profiles import builtin_profiles, load_profile

        if name in builtin_profiles():
            return load_profile(name)
        raise InputError(f"unknown profile {excerpt(name)}: name one of {', '.join(self.profile_names())}; a tool "
                         "never reads a profile file by path (start the server with --profile FILE)")

    def validator(self, profile_name: str | None = None) -> Any:
        """The validator for a profile name, built once over the server's grounders."""
        from ..gate.validator import Validator

        profile = self.profile(profile_name)
        key = "" if profile is None else f"{profile.id}\0{profile.sha256}"
        with self.gate_lock:
            validator = self._validators.get(key)
            if validator is None:
                validator = self._validators[key] = Validator(profile, grounders=self.grounders,
                                                              grounding=self.config.grounding)
            return validator

    def literature(self) -> Any:
        """The literature grounder over the configured store; ``ConfigurationError`` when there is none."""
        for grounder in self.grounders:
            if getattr(grounder, "grounds_literature", False):
                return grounder
        raise ConfigurationError("no pinned literature is configured: start the server with --snapshot-dir DIR "
                                 "(a folder with literature.json) or set BIOEVIDENCE_STORE")

    def store_dir(self) -> Path:
        """The snapshot folder ``ground`` pins into."""
        folder = self.config.snapshot_dir
        if folder is None:
            raise ConfigurationError("ground needs a snapshot folder to pin into: start the server with "
                                     "--snapshot-dir DIR or set BIOEVIDENCE_STORE")
        return folder

    # -- records named by path ---------------------------------------------------------------------
    def read_record(self, path: str) -> tuple[dict[str, Any], bool]:
        """The record in ``path`` (relative to the workspace; never outside it) and whether it may hold floats."""
        from ..gate.inputs import read_jobs

        workspace = self.config.workspace
        if workspace is None:
            raise ConfigurationError("this server reads no record files (it was started without --workspace DIR); "
                                     "pass the record itself as 'record'")
        target = Path(path)
        if not target.is_absolute():
            target = Path(workspace) / target
        if target.suffix.lower() not in (".json", ".yaml", ".yml"):
            raise InputError("a record file is .json, .yaml or .yml (one record)", file=path)
        jobs = list(read_jobs(target, workspace=Path(workspace)))
        value, floats = jobs[0].parse()
        return value, floats

    # -- the librarian ----------------------------------------------------------------------------
    def llm(self) -> Any:
        """The configured model (``--model``), or ``None``."""
        if self.config.model is None:
            return None
        if self._llm is None:
            from ..loop.llm import LLM, OpenAITransport

            self._llm = LLM(OpenAITransport(self.config.base_url, timeout=self.config.model_timeout),
                            self.config.model)
        return self._llm

    def librarian(self) -> Any:
        """The librarian over ``--index`` (built on first use: the lexicon takes a second to load)."""
        if self.config.index is None:
            raise ConfigurationError("no librarian index is configured: start the server with --index DIR "
                                     "(built by `bioevidence index build SOURCE... --index DIR`)")
        if self._librarian is None:
            from ..librarian.librarian import Librarian

            self._librarian = Librarian(self.config.index, references=self.config.references,
                                        vocabularies=self.config.vocabularies, planner=self.config.planner,
                                        judge=self.config.judge, llm=self.llm())
        return self._librarian
