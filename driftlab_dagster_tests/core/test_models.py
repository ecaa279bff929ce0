"""The real model clients against a server that is down: one line naming the URL and how to start one."""

from __future__ import annotations

import pytest

from driftlab_dagster.core.call_cache import call_key
from driftlab_dagster.core.clients import (
    ModelCallFailed,
    ModelServerDown,
    OllamaClient,
    OpenAICompatibleClient,
    ServerPool,
    pooled,
    server_urls,
)
from driftlab_dagster.loopback import free_port


@pytest.mark.parametrize("client_type, hint",
                         [(OllamaClient, "ollama serve"), (OpenAICompatibleClient, "llama-server")])
def test_a_server_that_is_down_at_the_start_fails_with_one_line_naming_the_url(client_type, hint):
    url = f"http://user:secret@127.0.0.1:{free_port()}"
    client = client_type(url, "some-model", timeout=5)
    with pytest.raises(ModelServerDown) as info:
        client.check()
    message = str(info.value)
    assert "http://***@127.0.0.1" in message and "secret" not in message
    assert hint in message and "\n" not in message


@pytest.mark.parametrize("client_type", [OllamaClient, OpenAICompatibleClient])
def test_a_call_to_a_server_that_went_away_is_retried_then_fails_as_an_outcome(client_type, monkeypatch):
    monkeypatch.setattr("driftlab_dagster.core.clients.BACKOFF_SECONDS", 0.01)
    client = client_type(f"http://127.0.0.1:{free_port()}", "some-model", timeout=5)
    for call in (lambda: client.chat_json("system", "user", None), lambda: client.embed(["x"])):
        with pytest.raises(ModelCallFailed, match=r"connection refused or dropped \(after 3 attempts\)"):
            call()


def test_the_ollama_client_respects_ollama_host(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:11999")
    assert OllamaClient(None, "m").url == "http://127.0.0.1:11999"


def test_the_cache_key_changes_with_model_prompt_input_and_schema():
    base = call_key("m", "system", "user", {"type": "object"})
    assert base == call_key("m", "system", "user", {"type": "object"})
    assert len({base, call_key("m2", "system", "user", {"type": "object"}),
                call_key("m", "system2", "user", {"type": "object"}),
                call_key("m", "system", "user2", {"type": "object"}),
                call_key("m", "system", "user", None)}) == 5


def test_a_streak_of_failed_calls_stops_the_run_but_asking_a_failed_call_again_does_not():
    from driftlab_dagster.core.call_cache import CachedClient
    from driftlab_dagster.core.replay import ReplayClient

    def broken(system: str, user: str) -> str:
        raise ModelCallFailed("HTTP 500: model crashed")

    client = CachedClient(ReplayClient(broken))
    for _ in range(20):  # the same failing call again and again: an outcome each time, never a second request
        with pytest.raises(ModelCallFailed):
            client.chat_json("s", "the same sentence", None)
    assert len(client.inner.calls) == 1 and client.spend.failed == 20
    for n in range(6):
        with pytest.raises(ModelCallFailed):
            client.chat_json("s", f"sentence {n}", None)
    with pytest.raises(ModelServerDown, match=r"the last 8 model calls to replay:// failed \(last: HTTP 500"):
        client.chat_json("s", "one more", None)


def test_a_reply_that_was_unusable_in_an_earlier_run_is_asked_again_without_counting_toward_the_streak():
    from driftlab_dagster.core.call_cache import CachedClient
    from driftlab_dagster.core.clients import ReplyInvalid
    from driftlab_dagster.core.replay import ReplayClient

    def must_be_json(content: str) -> None:
        if not content.startswith("{"):
            raise ValueError("reply is not JSON")

    def babbles(system: str, user: str) -> str:
        return "not json" if user.startswith("hard") else "{}"

    first = CachedClient(ReplayClient(babbles))
    for n in range(3):
        with pytest.raises(ReplyInvalid):
            first.chat_json("s", f"hard {n}", None, validate=must_be_json)
    assert set(first.new_failures) == {call_key("replay", "s", f"hard {n}", None) for n in range(3)}

    # The next run knows these prompts came back unusable: they are asked again (the server may have been
    # fixed), and failing again is an outcome for that prompt, not a sign that the server is down.
    rerun = CachedClient(ReplayClient(babbles), known_invalid=set(first.new_failures))
    for _ in range(4):
        for n in range(3):
            rerun.failed_keys.clear()  # as if each were a new run: every one reaches the server
            with pytest.raises(ReplyInvalid):
                rerun.chat_json("s", f"hard {n}", None, validate=must_be_json)
    assert len(rerun.inner.calls) == 12 and rerun.failure_streak == 0
    assert rerun.chat_json("s", "easy", None, validate=must_be_json).content == "{}"
    # Unusable replies to prompts never seen failing still stop the run after a streak of 8.
    for n in range(7):
        with pytest.raises(ReplyInvalid):
            rerun.chat_json("s", f"hard new {n}", None, validate=must_be_json)
    with pytest.raises(ModelServerDown):
        rerun.chat_json("s", "hard new 7", None, validate=must_be_json)


def test_transient_faults_are_retried_with_backoff_and_permanent_ones_are_not():
    from driftlab_dagster.core.clients import TransientCallError, with_retries

    attempts, waits = [], []

    def flaky() -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise TransientCallError("connection refused or dropped")
        return "ok"

    assert with_retries(flaky, sleep=waits.append) == "ok" and waits == [0.5, 1.0]

    def refused() -> str:
        attempts.append(1)
        raise ModelCallFailed("HTTP 404: no such model")

    attempts.clear()
    with pytest.raises(ModelCallFailed, match="HTTP 404"):
        with_retries(refused, sleep=waits.append)
    assert len(attempts) == 1


def test_a_url_setting_names_one_server_or_several():
    assert server_urls(None) == [None] and server_urls(" ") == [None]
    assert server_urls("http://a:1") == ["http://a:1"]
    assert server_urls("http://a:1, http://b:2,,http://a:1") == ["http://a:1", "http://b:2"]
    single = pooled(lambda url: OpenAICompatibleClient(url, "m"), "http://a:1")
    assert isinstance(single, OpenAICompatibleClient)
    pool = pooled(lambda url: OpenAICompatibleClient(url, "m"), "http://a:1,http://b:2")
    assert isinstance(pool, ServerPool) and pool.url == "http://a:1,http://b:2" and pool.model == "m"


def test_a_pool_sends_each_call_to_its_least_busy_server():
    import threading

    release = threading.Event()

    class Member:
        api, model, embed_model = "openai", "m", "e"

        def __init__(self, url: str):
            self.url, self.calls = url, 0

        def chat_json(self, system, user, schema, max_tokens=None):  # noqa: ANN001
            self.calls += 1
            release.wait(5)
            return user

    a, b = Member("a"), Member("b")
    pool = ServerPool([a, b])
    threads = [threading.Thread(target=pool.chat_json, args=("s", str(i), None)) for i in range(4)]
    for t in threads:
        t.start()
    while a.calls + b.calls < 4:
        threading.Event().wait(0.01)
    release.set()
    for t in threads:
        t.join()
    assert (a.calls, b.calls) == (2, 2)
