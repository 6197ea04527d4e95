"""An agent's side of `bioevidence mcp` (docs/mcp.md): the official MCP SDK's client over stdio.

Starts `bioevidence mcp` as a child, lists its tools, validates the two example claims (one
admitted, one misquoted: rejected with a fix), takes one round of the feedback loop on the
misquote, reads the pinned passage behind the good quote and asks the local index a question.

    python3 examples/mcp_client.py --snapshot-dir snapshots/ --index index/ grounded/*.json

Needs `pip install 'bioevidence[mcp]'`, `bioevidence` on PATH, the claims grounded into the
snapshot folder (`bioevidence ground`) and an index (`bioevidence index build`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters


def structured(result: Any) -> dict[str, Any]:
    """A tool's structured result; a tool error is one JSON line, as the CLI writes it."""
    if result.is_error:
        raise SystemExit(f"tool error: {result.content[0].text}")
    return dict(result.structured_content)


async def main(snapshots: Path, index: Path, records: list[Path], question: str) -> None:
    server = StdioServerParameters(command="bioevidence", args=[
        "mcp", "--snapshot-dir", str(snapshots), "--index", str(index), "--profile", "literature-claim"])
    async with Client(server) as client:
        listed = await client.list_tools()
        print("tools:", ", ".join(tool.name for tool in listed.tools))
        for path in records:
            record = json.loads(path.read_text(encoding="utf-8"))
            verdict = structured(await client.call_tool("validate_record", {"record": record}))
            print(f"{path.name}: {verdict['overall_status']}")
            for finding in verdict["findings"]:
                if finding["fix"]:
                    print(f"  {finding['rule_id']} ({finding['route']}): fix {finding['fix']['action']}")
            if verdict["admitted"]:
                item = record["evidence_items"][0]
                work, _, passage = item["locator"].partition("#")
                read = structured(await client.call_tool("get_passage", {"work": work, "locator": f"#{passage}"}))
                text = read["passages"][0]["text"]
                print(f"  passage {item['locator']}: quote found verbatim: {item['extracted_text'] in text}")
            else:
                step = structured(await client.call_tool("revise_step", {"record": record}))
                print(f"  revise_step: {step['outcome']}; feedback: {step['feedback'][0][:100]}")
        found = structured(await client.call_tool("ask", {"question": question, "top_k": 3}))
        for item in found["items"]:
            print(f"ask: [{item['stance']}] {item['text'][:90]}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--snapshot-dir", type=Path, required=True)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--question", default="Do BRAF V600E melanomas respond to vemurafenib?")
    parser.add_argument("records", nargs="+", type=Path)
    args = parser.parse_args()
    asyncio.run(main(args.snapshot_dir, args.index, args.records, args.question))
