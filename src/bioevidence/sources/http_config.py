"""Settings of the HTTP layer (:mod:`.http`): base URLs, per-service politeness, timeouts, limits.

:meth:`HttpConfig.from_env` reads the ``BIOEVIDENCE_*`` variables (and ``NCBI_API_KEY``, a secret
taken only from the environment); everything is re-exported by :mod:`.http`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .._version import __version__
from ..errors import ConfigurationError

DEFAULT_URLS = {
    "europepmc": "https://www.ebi.ac.uk/europepmc/webservices/rest",
    "eutils": "https://eutils.ncbi.nlm.nih.gov/entrez/eutils",
    "crossref": "https://api.crossref.org",
    "dblp": "https://sparql.dblp.org",
}
ENV_URLS = {
    "europepmc": "BIOEVIDENCE_EUROPEPMC_URL",
    "eutils": "BIOEVIDENCE_EUTILS_URL",
    "crossref": "BIOEVIDENCE_CROSSREF_URL",
    "dblp": "BIOEVIDENCE_DBLP_SPARQL_URL",
}


@dataclass(frozen=True)
class HostLimit:
    """Politeness for one service: at most ``rate`` requests per second (None = no rate cap)
    and at most ``concurrency`` requests in flight."""

    rate: float | None
    concurrency: int


def default_limits(ncbi_api_key: str | None) -> dict[str, HostLimit]:
    return {
        "eutils": HostLimit(10.0 if ncbi_api_key else 3.0, 10 if ncbi_api_key else 3),
        "europepmc": HostLimit(None, 5),
        "crossref": HostLimit(10.0, 3),
        "dblp": HostLimit(2.0, 2),
        "default": HostLimit(None, 4),
    }


@dataclass(frozen=True)
class HttpConfig:
    """Settings of the HTTP layer; :meth:`from_env` reads the ``BIOEVIDENCE_*`` variables."""

    email: str | None = None
    tool: str = "bioevidence"
    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    max_attempts: int = 5
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    retry_after_max: float = 120.0
    deadline: float = 120.0
    max_bytes: int = 50 * 1024 * 1024
    cache_dir: Path | None = None
    # a redirect may leave the service's host only where the bytes are checked against a pinned
    # SHA-256 afterwards (release downloads: GitHub hands them to its storage host)
    cross_host_redirects: bool = False
    ncbi_api_key: str | None = None
    urls: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_URLS))
    limits: Mapping[str, HostLimit] | None = None

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigurationError("max_attempts must be at least 1")
        if self.max_bytes < 1:
            raise ConfigurationError("max_bytes must be positive")
        if not self.deadline > 0:
            raise ConfigurationError("the HTTP deadline must be a positive number of seconds")
        for name, url in self.urls.items():
            if urlsplit(url).scheme not in ("http", "https"):
                raise ConfigurationError(f"base URL for {name} must start with http:// or https://, got {url!r}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> HttpConfig:
        env = os.environ if environ is None else environ
        urls = dict(DEFAULT_URLS)
        for name, var in ENV_URLS.items():
            if env.get(var):
                urls[name] = env[var].rstrip("/")
        from ..limits import limit

        values: dict[str, Any] = {
            "email": env.get("BIOEVIDENCE_EMAIL") or None,
            "ncbi_api_key": env.get("NCBI_API_KEY") or None,
            "urls": urls,
            "deadline": float(limit("http_deadline", env)),
        }
        if env.get("BIOEVIDENCE_HTTP_CACHE"):
            values["cache_dir"] = Path(env["BIOEVIDENCE_HTTP_CACHE"])
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def url(self, service: str) -> str:
        try:
            return self.urls[service].rstrip("/")
        except KeyError as exc:
            raise ConfigurationError(f"no base URL configured for service {service!r}") from exc

    def limit(self, service: str) -> HostLimit:
        limits = self.limits if self.limits is not None else default_limits(self.ncbi_api_key)
        return limits.get(service) or limits.get("default") or HostLimit(None, 4)

    @property
    def user_agent(self) -> str:
        contact = f"; mailto:{self.email}" if self.email else ""
        return f"bioevidence/{__version__} (+https://github.com/bioevidence/bioevidence{contact})"

    def with_(self, **changes: Any) -> HttpConfig:
        return replace(self, **changes)
