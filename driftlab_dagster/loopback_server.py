"""A loopback OpenAI-compatible server that misbehaves on purpose: the fault tests of the model path, and
`bench/concurrency.py`'s server that answers every call after a set delay.

Healthy, it answers like a model that reads perfectly: extraction calls (one sentence) with the facts the
world's ontology finds in the sentence, reader calls with "unknown". Each fault mode breaks replies the way
real servers and proxies do: poisoned JSON, truncated JSON, an HTML page with status 200, no choices, a
10 MB reply, a reply slower than the client's timeout, HTTP 500, a dropped connection; an HTML page where
the list of models should be; embeddings (OpenAI's and Ollama's routes) of different lengths, or HTTP 500;
replies that come, but late. A stand-in for the model server only, never for the system under test: the
real `openai` client, the real study and a real DuckDB file run against it. It lives in the package, not the
test package, because the benchmarks use it too.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler

from driftlab_dagster.core.ontology import Ontology
from driftlab_dagster.loopback import ThreadedLoopbackServer

MODES = ("healthy", "poisoned", "truncated", "html", "empty", "huge", "slow", "error500", "dropped", "flaky",
         "html_models", "embed_ragged", "embed_error500", "sluggish")
EMBED_MODEL = "fake-embed"


class LoopbackModelServer(ThreadedLoopbackServer):
    def __init__(self, ontology: Ontology, mode: str = "healthy", model: str = "fake-model", delay: float = 1.0,
                 latency: float = 0.0):
        assert mode in MODES, mode
        self.ontology, self.mode, self.model, self.delay = ontology, mode, model, delay
        self.latency = latency  # seconds every chat reply takes, as a model decoding it would
        self.in_flight = 0
        self.most_in_flight = 0  # the most chat calls the server held at once
        self.reader_in_flight = 0
        self.most_reader_in_flight = 0  # the most reader calls (a plain-text answer) held at once
        super().__init__()
        self.chat_requests = 0
        self.authorizations: set[str] = set()  # the Authorization headers clients sent
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output clean
                return

            def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802 - the http.server API
                if server.mode == "html_models":  # a web server where a model server was meant
                    self._send(200, b"<!DOCTYPE html><html><body>Welcome to nginx!</body></html>", "text/html")
                elif self.path == "/api/tags":  # Ollama's list of models
                    names = (server.model, EMBED_MODEL)
                    self._send(200, json.dumps({"models": [{"model": n, "name": n} for n in names]}).encode())
                elif self.path.rstrip("/").endswith("/models"):
                    self._send(200, json.dumps({"object": "list", "data": [{"id": server.model, "object": "model"}]})
                               .encode())
                else:
                    self._send(404, b"{}")

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                request = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.chat_requests += 1
                    n = server.chat_requests
                    server.authorizations.add(self.headers.get("Authorization", ""))
                if self.path.rstrip("/").endswith("/embeddings") or self.path == "/api/embed":
                    server.embed(self, request)
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, b"{}")
                    return
                # A call counts as held while the "model" decodes it, before its reply is sent: a client that
                # waits for each reply can then never be seen holding two.
                reader = request.get("response_format") is None
                with server._lock:
                    server.in_flight += 1
                    server.most_in_flight = max(server.most_in_flight, server.in_flight)
                    server.reader_in_flight += reader
                    server.most_reader_in_flight = max(server.most_reader_in_flight, server.reader_in_flight)
                try:
                    time.sleep(server.latency)
                finally:
                    with server._lock:
                        server.in_flight -= 1
                        server.reader_in_flight -= reader
                server.respond(self, request, n)

        self._listen(Handler)

    # ----- what a perfect reader would say
    def healthy_content(self, request: dict) -> str:
        system, user = request["messages"][0]["content"], request["messages"][-1]["content"]
        if system.startswith("You check whether ONE sentence"):  # relation-v1: one relation, one sentence
            relation = re.search(r"^Relation (\w+):", system, re.MULTILINE)
            said = [t for t in self.ontology.parse(user) if relation and t.predicate == relation.group(1)]
            if said:
                return json.dumps({"states": True, "subject": said[0].subject, "object": said[0].object})
            return json.dumps({"states": False, "subject": "", "object": ""})
        if request.get("response_format") is None and system.startswith("Answer the question"):
            return "unknown"  # reader-v3 answers in plain text
        if system.startswith("You read ONE sentence"):
            facts = [t._asdict() for t in self.ontology.parse(user)]
            return json.dumps({"facts": facts})
        if "facts" in json.dumps(request.get("response_format") or {}):
            return json.dumps({"facts": [t._asdict() for t in self.ontology.parse(user)]})
        return json.dumps({"answer": "unknown", "possibly_stale": False})

    def embed(self, handler, request: dict) -> None:
        """OpenAI's /v1/embeddings or Ollama's /api/embed: 8 numbers per text from its hash; broken on purpose
        in the embed_* modes (every other vector one number short; HTTP 500)."""
        if self.mode == "embed_error500":
            handler._send(500, json.dumps({"error": {"message": "embedding model crashed"}}).encode())
            return
        texts = request.get("input") or []
        texts = [texts] if isinstance(texts, str) else texts
        vectors = [[b / 255 for b in hashlib.sha256(t.encode()).digest()[:8]] for t in texts]
        if self.mode == "embed_ragged":
            vectors = [v[: 8 - i % 2] for i, v in enumerate(vectors)]
        if handler.path == "/api/embed":
            body: dict = {"model": request.get("model"), "embeddings": vectors}
        else:
            body = {"object": "list", "model": request.get("model"), "usage": {"prompt_tokens": 0, "total_tokens": 0},
                    "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]}
        handler._send(200, json.dumps(body).encode())

    def respond(self, handler, request: dict, n: int) -> None:
        mode = self.mode
        content = self.healthy_content(request)
        if mode == "poisoned":
            content = '{"facts": ' + "[" * 5000 + "]" * 5000 + ', "n": ' + "9" * 5000 + "}"
        elif mode == "truncated":
            content = content[: max(1, len(content) // 2)]
        elif mode == "huge":
            content = '{"facts": [], "padding": "' + "x" * 10_000_000 + '"}'
        elif mode == "flaky" and n % 5 == 0:  # one reply in five is not JSON: a fifth of the calls fail
            content = "I think the answer is 49."
        if mode == "html":
            handler._send(200, b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html")
            return
        if mode == "error500":
            handler._send(500, json.dumps({"error": {"message": "model crashed"}}).encode())
            return
        if mode == "dropped" and n % 7 == 3:  # a proxy resets a connection now and then; a retry gets through
            handler.close_connection = True
            handler.connection.shutdown(2)
            return
        if mode == "slow" and n % 10 == 1:  # slower than the client's timeout, once in a while
            time.sleep(2.5)
        if mode == "sluggish" and n <= 2:  # the first replies come, but only after `delay` seconds
            time.sleep(self.delay)
        choices = [] if mode == "empty" else [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant", "content": content}}]
        body = {"id": f"c{n}", "object": "chat.completion", "created": 0, "model": self.model, "choices": choices,
                "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}}
        try:
            handler._send(200, json.dumps(body).encode())
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout): nothing to answer
