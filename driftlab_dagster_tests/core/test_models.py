"""The real model clients against a server that is down: one line naming the URL and how to start one."""

from __future__ import annotations

import pytest

from driftlab_dagster.core.models import ModelServerDown, OllamaClient, OpenAICompatibleClient, call_key
from driftlab_dagster_tests.support.local_model import free_port


@pytest.mark.parametrize("client_type, hint", [(OllamaClient, "ollama serve"), (OpenAICompatibleClient, "llama-server")])
def test_a_server_that_is_down_fails_with_one_line_naming_the_url(client_type, hint):
    url = f"http://127.0.0.1:{free_port()}"
    client = client_type(url, "some-model", timeout=5)
    for call in (client.check, lambda: client.chat_json("system", "user", None), lambda: client.embed(["x"])):
        with pytest.raises(ModelServerDown) as info:
            call()
        message = str(info.value)
        assert url in message and hint in message and "\n" not in message


def test_the_ollama_client_respects_ollama_host(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:11999")
    assert OllamaClient(None, "m").url == "http://127.0.0.1:11999"


def test_the_cache_key_changes_with_model_prompt_input_and_schema():
    base = call_key("m", "system", "user", {"type": "object"})
    assert base == call_key("m", "system", "user", {"type": "object"})
    assert len({base, call_key("m2", "system", "user", {"type": "object"}),
                call_key("m", "system2", "user", {"type": "object"}), call_key("m", "system", "user2", {"type": "object"}),
                call_key("m", "system", "user", None)}) == 5
