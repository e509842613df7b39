"""OpenAIChatModel against a real HTTP server on 127.0.0.1 that plays scripted replies."""
from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ragbench.errors import ConfigError, ModelError, NetworkError
from ragbench.httputil import retry_after_seconds as _retry_after
from ragbench.llm.openai import OpenAIChatModel
from ragbench.schema import Message
from ragbench.text import count_tokens

OK = {"choices": [{"message": {"role": "assistant", "content": "Leave is 25 days [1]."}, "finish_reason": "stop"}],
      "usage": {"prompt_tokens": 11, "completion_tokens": 7}}
MSGS = [Message("system", "be brief"), Message("user", "How much leave?", {"rag": {"question": "secret meta"}})]


class Script:
    """Replies popped in order: (status, body bytes | dict, headers, delay seconds); the last one repeats."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.requests: list[dict] = []

    def next(self):
        return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]


@pytest.fixture
def server():
    holder: dict = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep test output clean
            pass

        def do_POST(self):
            script: Script = holder["script"]
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            script.requests.append({"path": self.path, "auth": self.headers.get("Authorization"),
                                    "body": json.loads(body)})
            status, payload, headers, delay = script.next()
            if delay:
                time.sleep(delay)
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            try:
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()

    def play(*replies):
        holder["script"] = Script(*replies)
        return holder["script"]

    play.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield play
    httpd.shutdown()
    httpd.server_close()


def model(url, sleeps, **kw):
    kw.setdefault("max_retries", 3)
    return OpenAIChatModel(base_url=url, model="gpt-4o-mini", api_key="sk-test", backoff=0.5, max_backoff=8.0,
                           sleep=sleeps.append, **kw)


def test_canned_reply_and_request_shape(server):
    script = server((200, OK, {}, 0))
    sleeps: list[float] = []
    c = model(server.url, sleeps).complete(MSGS)
    assert (c.text, c.prompt_tokens, c.completion_tokens, c.model_id, c.finish_reason) == \
        ("Leave is 25 days [1].", 11, 7, "gpt-4o-mini", "stop")
    req = script.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-test"
    assert req["body"]["model"] == "gpt-4o-mini" and req["body"]["temperature"] == 0.0
    # Only role and content travel: structured meta stays local.
    assert req["body"]["messages"] == [{"role": "system", "content": "be brief"},
                                       {"role": "user", "content": "How much leave?"}]
    assert sleeps == []


def test_base_url_with_v1_and_env_settings(server, monkeypatch):
    script = server((200, OK, {}, 0))
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1/")
    monkeypatch.setenv("OPENAI_MODEL", "local-model")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    c = OpenAIChatModel().complete(MSGS)
    assert c.model_id == "local-model"
    assert script.requests[0]["path"] == "/v1/chat/completions" and script.requests[0]["auth"] is None


def test_usage_missing_falls_back_to_counting(server):
    server((200, {"choices": [{"message": {"content": "Two words"}}]}, {}, 0))
    c = model(server.url, []).complete(MSGS)
    assert c.prompt_tokens == count_tokens("be brief") + count_tokens("How much leave?")
    assert c.completion_tokens == count_tokens("Two words")


def test_500_then_success_backs_off_once(server):
    script = server((500, {"error": "boom"}, {}, 0), (200, OK, {}, 0))
    sleeps: list[float] = []
    assert model(server.url, sleeps).complete(MSGS).text == "Leave is 25 days [1]."
    assert len(script.requests) == 2 and sleeps == [0.5]


def test_429_retry_after_is_honoured_and_capped(server):
    script = server((429, {}, {"Retry-After": "2"}, 0), (429, {}, {"Retry-After": "100"}, 0), (200, OK, {}, 0))
    sleeps: list[float] = []
    model(server.url, sleeps).complete(MSGS)
    assert sleeps == [2.0, 8.0] and len(script.requests) == 3


def test_persistent_503_raises_network_error_after_all_retries(server):
    script = server((503, {}, {}, 0))
    sleeps: list[float] = []
    with pytest.raises(NetworkError, match="after 4 attempt"):
        model(server.url, sleeps).complete(MSGS)
    assert len(script.requests) == 4 and sleeps == [0.5, 1.0, 2.0]


@pytest.mark.parametrize("payload, match", [
    (b"<html>not json</html>", "not JSON"),
    ({"choices": []}, "lacks choices"),
    ({"choices": [{"message": {"content": 42}}]}, "must be a string"),
    ({"result": "ok"}, "lacks choices"),
])
def test_malformed_replies_are_model_errors_without_retry(server, payload, match):
    script = server((200, payload, {}, 0))
    with pytest.raises(ModelError, match=match):
        model(server.url, []).complete(MSGS)
    assert len(script.requests) == 1


def test_client_errors_say_how_to_fix(server):
    server((401, {"error": "bad key"}, {}, 0))
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        model(server.url, []).complete(MSGS)


def test_slow_server_times_out_as_network_error(server):
    script = server((200, OK, {}, 1.5))
    sleeps: list[float] = []
    with pytest.raises(NetworkError, match="ReadTimeout"):
        model(server.url, sleeps, timeout=0.2, max_retries=1).complete(MSGS)
    assert len(script.requests) == 2 and sleeps == [0.5]


def test_unreachable_server():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sleeps: list[float] = []
    with pytest.raises(NetworkError, match="ConnectError"):
        model(f"http://127.0.0.1:{port}", sleeps, max_retries=2).complete(MSGS)
    assert sleeps == [0.5, 1.0]


def test_configuration_errors(monkeypatch):
    for var in ("OPENAI_BASE_URL", "OPENAI_MODEL"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ConfigError, match="OPENAI_BASE_URL"):
        OpenAIChatModel(model="m").complete(MSGS)
    with pytest.raises(ConfigError, match="OPENAI_MODEL"):
        OpenAIChatModel(base_url="http://127.0.0.1:9").complete(MSGS)
    with pytest.raises(ConfigError, match="http"):
        OpenAIChatModel(base_url="127.0.0.1:9", model="m").complete(MSGS)
    with pytest.raises(ConfigError):
        OpenAIChatModel(base_url="http://127.0.0.1:9", model="m", max_retries=-1).complete(MSGS)
    assert "sk-" not in repr(OpenAIChatModel(base_url="http://h", model="m", api_key="sk-secret"))


def test_retry_after_parsing():
    assert _retry_after("3") == 3.0
    assert _retry_after(None) is None and _retry_after("soon") is None
    assert _retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a past date: retry now
