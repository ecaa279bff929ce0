"""One GraphQL request to a running Dagster webserver, as the UI makes it (the UI and PostgreSQL tests)."""

from __future__ import annotations

import json
import urllib.request


def graphql(base: str, query: str, variables: dict | None = None) -> dict:
    """The `data` of the answer; fails the test on any GraphQL error."""
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    request = urllib.request.Request(base + "/graphql", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        data = json.loads(response.read())
    assert "errors" not in data, data["errors"]
    return data["data"]
