"""The whole study on a real local model, start to finish: starts llama-cpp-python's server with the
0.5B model the registries ship (driftlab_dagster/model_server.py), runs `driftlab run` with the model
extractor and reader, and prints the two-column table, the hedging table, the wrong answers and the cost
table.

    PYTHONPATH=. .venv/bin/python bench/model_run.py [--api openai|ollama] [--out data/model-0.5b]

Takes about half an hour on 2 cores. A second run reuses the call cache in the DuckDB file and is quick.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from driftlab_dagster.model_server import MODEL_ALIAS, EmbeddingServer, LlamaServer
from driftlab_dagster.ollama_adapter import OllamaAdapter


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--api", choices=["openai", "ollama"], default="openai")
    parser.add_argument("--out", default="data/model-0.5b")
    parser.add_argument("--prompt", help="extraction prompt version (default: the settings' default)")
    parser.add_argument("extra", nargs="*", help="more `driftlab run` arguments")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with LlamaServer() as llama, EmbeddingServer() as e5, OllamaAdapter(llama.url, MODEL_ALIAS, e5.url) as adapter:
        url = llama.url if args.api == "openai" else adapter.url
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "driftlab_dagster", "run", "--extractor", "model", "--reader", "model",
                        "--api", args.api, "--url", url, "--model", MODEL_ALIAS,
                        *(["--prompt", args.prompt] if args.prompt else []),
                        "--database", str(out / "driftlab.duckdb"), "--out", str(out), *args.extra], check=True)
        print(f"wall time {time.perf_counter() - started:.0f}s")


if __name__ == "__main__":
    main()
