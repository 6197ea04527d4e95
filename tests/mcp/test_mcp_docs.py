"""docs/mcp.md's client configurations can be pasted as they are: each JSON and TOML block parses, and
every server it starts is `bioevidence mcp` with options the command has."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from bioevidence.cli.mcp import mcp

DOC = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"


def blocks(info: str) -> list[str]:
    return re.findall(rf"^```{info}\n(.*?)^```$", DOC.read_text(encoding="utf-8"), re.M | re.S)


def servers(config: dict[str, Any]) -> list[dict[str, Any]]:
    found = [*config.get("mcpServers", {}).values(), *config.get("servers", {}).values(),
             *config.get("mcp_servers", {}).values()]
    assert found, config
    return found


def test_every_client_configuration_parses_and_starts_bioevidence_mcp_with_real_options() -> None:
    options = {opt for param in mcp.params for opt in getattr(param, "opts", [])}
    configs = [json.loads(text) for text in blocks("json")] + [tomllib.loads(text) for text in blocks("toml")]
    assert len(configs) >= 3
    started = 0
    for config in configs:
        for server in servers(config):
            if "url" in server:
                assert server["url"] == "http://127.0.0.1:8765/mcp"
                continue
            assert server["command"].endswith("bioevidence") and server["args"][0] == "mcp"
            flags = [a for a in server["args"][1:] if a.startswith("--")]
            assert flags and set(flags) <= options, set(flags) - options
            started += 1
    assert started >= 3
