"""A SPARQL 1.1 endpoint on a LoopbackServer: pyoxigraph answers GET ``/sparql?query=...`` with
SPARQL JSON results from an in-memory store loaded with Turtle (DBLP's schema in the tests)."""

from __future__ import annotations

from pathlib import Path

from loopback import LoopbackServer, Reply


def serve_sparql(server: LoopbackServer, *turtle: Path) -> list[str]:
    """Route ``/sparql`` to a pyoxigraph store holding ``turtle``; returns the list of queries received."""
    import pyoxigraph as ox

    store = ox.Store()
    for path in turtle:
        store.load(path.read_bytes(), format=ox.RdfFormat.TURTLE)
    received: list[str] = []

    def sparql(query: dict[str, str]) -> Reply:
        text = query.get("query", "")
        received.append(text)
        try:
            results = store.query(text)
        except SyntaxError as exc:
            return Reply(400, str(exc).encode(), "text/plain")
        body = results.serialize(format=ox.QueryResultsFormat.JSON)  # type: ignore[union-attr]
        return Reply(200, bytes(body), "application/sparql-results+json")

    server.route("/sparql", sparql)
    return received
