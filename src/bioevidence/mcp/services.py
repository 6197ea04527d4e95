"""The stage objects a server holds: the gate (validators sharing one set of grounders), the
literature grounder behind it, and the librarian, built from a :class:`ServerConfig`.

Tool calls run on worker threads; the gate and the librarian each sit behind a lock, so a
grounder's caches and the index are used by one call at a time. ``ground`` and ``pin`` swap in a
gate that sees the newly pinned works (:meth:`Services.reload`) under the same lock;
``add_to_index`` rebuilds the index under the librarian's lock and drops the librarian, so the next
``ask`` opens the new index. The tools that go online share one HTTP client, so each service's
rate and concurrency limits hold across calls, as they do within one ``bioevidence ground`` run.
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
        self.ground_lock = threading.Lock()  # the store's writers: ground, pin, find
        self._http_lock = threading.Lock()
        self._http: Any = None
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

    def store_dir(self, tool: str) -> Path:
        """The snapshot folder ``ground``, ``pin`` and ``find`` pin into (``tool`` names the asker)."""
        folder = self.config.snapshot_dir
        if folder is None:
            raise ConfigurationError(f"{tool} needs the server's snapshot folder: start the server with "
                                     "--snapshot-dir DIR or set BIOEVIDENCE_STORE")
        return folder

    def http(self) -> Any:
        """The server's one HTTP client (``sources.http``, configured as ``bioevidence ground``: its
        environment, ``--email``, ``--http-deadline``); it lives as long as the server."""
        with self._http_lock:
            if self._http is None:
                from ..sources.http import HttpClient, HttpConfig

                self._http = HttpClient(HttpConfig.from_env(email=self.config.email,
                                                            deadline=self.config.http_deadline))
            return self._http

    def queue_path(self) -> Path:
        """The review queue ``queue_for_review`` writes and ``review_status`` reads."""
        if self.config.queue is None:
            raise ConfigurationError("no review queue is configured: start the server with --queue FILE (the "
                                     "SQLite file `bioevidence review` and `bioevidence serve` use)")
        return Path(self.config.queue)

    def index_dir(self) -> Path:
        """The librarian's index folder (``--index``)."""
        if self.config.index is None:
            raise ConfigurationError("no librarian index is configured: start the server with --index DIR "
                                     "(built by `bioevidence index build SOURCE... --index DIR`, or an empty "
                                     "folder add_to_index builds)")
        return Path(self.config.index)

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

    def librarian(self, backend: Any = None) -> Any:
        """The librarian over ``--index`` (built on first use: the lexicon takes a second to load), or,
        with ``backend``, a new one over that backend (``find``: Europe PMC) with the same settings."""
        from ..librarian.librarian import Librarian

        settings = {"references": self.config.references, "vocabularies": self.config.vocabularies,
                    "planner": self.config.planner, "judge": self.config.judge, "llm": self.llm()}
        if backend is not None:
            return Librarian(backend=backend, **settings)
        index = self.index_dir()
        if self._librarian is None:
            if not (index / "index.sqlite").is_file():
                raise ConfigurationError(f"the index folder {index} holds no index yet: pin works and call "
                                         "add_to_index, or build one with `bioevidence index build SOURCE... "
                                         f"--index {index}`")
            self._librarian = Librarian(index, **settings)
        return self._librarian

    def drop_librarian(self) -> None:
        """Forget the librarian (its index was rebuilt); the next ``ask`` opens the new one. Called
        under ``ask_lock``."""
        if self._librarian is not None and self._librarian.index is not None:
            self._librarian.index.close()
        self._librarian = None
