"""What a ``bioevidence mcp`` server is configured with: the CLI's settings, fixed at start.

Built by ``cli/mcp.py`` from the same flags and environment as ``validate``, ``ground`` and
``ask`` (``--snapshot-dir`` or ``$BIOEVIDENCE_STORE`` / ``$BIOEVIDENCE_HOME/store``, the grounder
flags or a profile's ``grounders:`` section, ``--no-grounding``, ``--profile``, ``--index``,
``--model`` with ``--base-url`` or ``$OPENAI_BASE_URL``, ``--queue``). A tool argument never names
a path outside these: a record file is read only inside ``workspace``, a profile is chosen by name
among the built-ins and the ``--profile`` files given here. Tools write only the store (``ground``,
``pin``, ``find``), the index (``add_to_index``) and the review queue (``queue_for_review``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError

PLANNERS = ("offline", "llm")


@dataclass(frozen=True)
class ServerConfig:
    """The settings every tool call runs with (immutable for the server's lifetime).

    ``grounders`` is what the CLI resolves for ``validate`` (``None``: no grounder asked for);
    ``grounding=False`` is ``--no-grounding``. ``profiles`` are built-in names or YAML paths,
    the first one the default for records (none: each record's ``profile_id``, as ``validate``).
    """

    grounders: Any = None  # GrounderOptions | None (kept untyped so this module imports nothing heavy)
    grounding: bool = True
    profiles: tuple[str, ...] = ()
    index: Path | None = None
    references: Path | None = None
    planner: str = "offline"
    judge: str = "offline"
    stance: str = "offline"
    vocabularies: tuple[Path, ...] = ()
    model: str | None = None
    base_url: str | None = None
    model_timeout: float = 120.0
    workspace: Path | None = None
    email: str | None = None
    resolver: str = "ncbi"
    http_deadline: float | None = None
    rounds: int = 3
    queue: Path | None = None

    def __post_init__(self) -> None:
        if not {self.planner, self.judge, self.stance} <= set(PLANNERS):
            raise ConfigurationError(f"planner, judge and stance must be one of {', '.join(PLANNERS)}")
        if "llm" in (self.planner, self.judge, self.stance) and not self.model:
            raise ConfigurationError("--planner llm / --judge llm / --stance llm need --model NAME (the name the "
                                     "server lists at /v1/models)")
        if self.index is not None and not Path(self.index).is_dir():
            raise ConfigurationError(f"--index {self.index} is not a folder; build one with "
                                     "`bioevidence index build SOURCE... --index DIR`")
        if self.workspace is not None and not Path(self.workspace).is_dir():
            raise ConfigurationError(f"--workspace {self.workspace} is not a folder")
        if self.rounds < 1:
            raise ConfigurationError("--rounds must be at least 1")
        if self.queue is not None:
            self.check_queue()

    def check_queue(self) -> None:
        """The review queue is written by ``queue_for_review``: refuse it inside the store (pinned inputs)
        or the index (rewritten by ``add_to_index``), as the CLI's output guard does (``paths.refuse_output``)."""
        from ..paths import refuse_output

        assert self.queue is not None
        if not Path(self.queue).parent.is_dir():
            raise ConfigurationError(f"--queue {self.queue}: its folder does not exist")
        folders = [f for f in (self.snapshot_dir, self.index) if f is not None]
        refuse_output(Path(self.queue), folders=folders, what="--queue")

    @property
    def snapshot_dir(self) -> Path | None:
        """The pinned snapshot folder (the store ``ground`` pins into and grounders read)."""
        folder = getattr(self.grounders, "snapshot_dir", None)
        return Path(folder) if folder is not None else None

    def summary(self) -> dict[str, Any]:
        """What an agent may know about the server's configuration (no credentials, no file contents)."""
        return {
            "store": str(self.snapshot_dir) if self.snapshot_dir is not None else None,
            "grounding": self.grounding,
            "profiles": list(self.profiles),
            "index": str(self.index) if self.index is not None else None,
            "planner": self.planner,
            "judge": self.judge,
            "stance": self.stance,
            "model": self.model,
            "workspace": str(self.workspace) if self.workspace is not None else None,
            "resolver": self.resolver,
            "rounds": self.rounds,
            "queue": str(self.queue) if self.queue is not None else None,
        }
