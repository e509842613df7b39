"""``ragbench serve`` as a real uvicorn process: authentication, problem details, request ids and JSON logs, body
limits, rate limits, chat-session ownership, feedback, metrics and the research job lifecycle.

One server per module (started once, ~5 s) keeps the suite fast; every test uses its own ``sub`` so that rate
limits and ownership never interfere between tests."""
from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
import uuid
from base64 import urlsafe_b64encode
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
import yaml

from .helpers import FAST, Server, bearer, token  # first: skips the module when the serve extra is missing

from cryptography.hazmat.primitives import serialization  # PyJWT[crypto]
from cryptography.hazmat.primitives.asymmetric import ec

ISS, AUD = "https://idp.test", "ragbench-test"
RATE = 12


def tok(sub: str | None = None, **kw: object) -> str:
    kw.setdefault("iss", ISS)
    kw.setdefault("aud", AUD)
    return token(sub or f"user-{uuid.uuid4().hex[:8]}", **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def ec_key():
    return ec.generate_private_key(ec.SECP256R1())


class OtlpReceiver:
    """A loopback OTLP/HTTP collector that keeps the (protobuf) bodies posted to /v1/traces."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                receiver.bodies.append(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1/traces"


@pytest.fixture(scope="module")
def otlp():
    receiver = OtlpReceiver()
    yield receiver
    receiver.httpd.shutdown()


@pytest.fixture(scope="module")
def server(tmp_path_factory, ec_key, otlp):
    tmp = tmp_path_factory.mktemp("serve-api")
    pem = ec_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    (tmp / "ec.pem").write_bytes(pem)
    digest = hashlib.sha256(b"agent-key-2").hexdigest()
    (tmp / "keys.yaml").write_text(yaml.safe_dump({"api_keys": {
        "agent-key-1": {"sub": "agent-1", "roles": ["guest"], "departments": [], "clearance": "Public"},
        f"sha256:{digest}": {"sub": "agent-2", "roles": ["employee"], "departments": ["hr"],
                             "clearance": "Confidential"}}}))
    args = ["--retriever", "bm25", "--rate-limit", f"{RATE}/minute", "--jwt-public-key", str(tmp / "ec.pem"),
            "--issuer", ISS, "--audience", AUD, "--api-keys", str(tmp / "keys.yaml"), "--testweb",
            "--hub", str(tmp / "hub.db"), "--set", "serve.max_body_bytes=4096", "--set", "serve.hub_refresh_seconds=0",
            "--set", "serve.decided_by_metrics=true",
            "--otlp-endpoint", otlp.url, *FAST]
    with Server(tmp, args, env={"OTEL_BSP_SCHEDULE_DELAY": "100"}) as s:
        yield s


def assert_problem(r: httpx.Response, status: int, slug: str) -> dict:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/problem+json"
    body = r.json()
    assert body["type"] == f"urn:ragbench:problem:{slug}"
    assert body["status"] == status
    assert set(body) >= {"type", "title", "status", "detail", "request_id"}
    assert body["request_id"] == r.headers["x-request-id"]
    return body


ASK = {"question": "How many days of annual leave do staff get?"}


# ---------------------------------------------------------------------------------------------- auth


def test_valid_token_answers_with_citations(server):
    with server.client() as c:
        r = c.post("/v1/ask", json=ASK, headers=bearer(tok()))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["refused"] is False and body["refusal_reason"] is None
    assert body["citations"][0]["doc_id"] == "hr-leave"
    # marker = the cited chunk's place in the context: with stemmed BM25 (bm25.stemmer: english, issue 17) the
    # hybrid ranking puts another chunk first and the leave-entitlement chunk second
    assert body["citations"][0]["marker"] == 2
    assert body["prompt_version"] == "rag.answer@v1" and body["model_id"] == "extractive-v1"
    assert body["request_id"] == r.headers["x-request-id"]
    assert body["unanswered_parts"] == []  # a one-part question
    assert "judge_p_yes" in body and body["judge_p_yes"] is None  # no judge read it


@pytest.mark.parametrize("case", ["missing", "expired", "wrong-secret", "alg-none", "no-clearance", "bad-clearance",
                                  "roles-not-list", "wrong-audience", "wrong-issuer", "garbage", "basic-scheme",
                                  "hs256-with-public-key", "es256-other-key", "unknown-api-key"])
def test_bad_credentials_are_401(server, case, ec_key):
    pem = (server.workdir / "ec.pem").read_text()
    headers = {
        "missing": {},
        "expired": bearer(tok(ttl=-60)),
        "wrong-secret": bearer(tok(secret="another-secret-" + "y" * 40)),
        "alg-none": bearer(tok(alg="none", key="")),
        "no-clearance": bearer(tok(drop=("clearance",))),
        "bad-clearance": bearer(tok(clearance="TopSecret")),
        "roles-not-list": bearer(tok(roles="admin")),
        "wrong-audience": bearer(tok(aud="someone-else")),
        "wrong-issuer": bearer(tok(iss="https://evil.test")),
        "garbage": {"Authorization": "Bearer not.a.jwt"},
        "basic-scheme": {"Authorization": "Basic YWxpY2U6cHc="},
        # Key confusion: the public key used as an HMAC secret must not verify.
        "hs256-with-public-key": bearer(jwt_hs256_with(pem)),
        "es256-other-key": bearer(tok(alg="ES256", key=ec.generate_private_key(ec.SECP256R1()))),
        "unknown-api-key": {"X-API-Key": "nope"},
    }[case]
    with server.client() as c:
        r = c.post("/v1/ask", json=ASK, headers=headers)
    body = assert_problem(r, 401, "unauthorized")
    assert r.headers["www-authenticate"].startswith("Bearer")
    assert "annual leave" not in r.text.lower()
    assert len(body["detail"]) > 10


def jwt_hs256_with(secret: str) -> str:
    def b64(data: bytes) -> bytes:
        return urlsafe_b64encode(data).rstrip(b"=")

    claims = {"sub": "mallory", "roles": ["board"], "departments": ["executive"], "clearance": "Restricted",
              "exp": int(time.time()) + 600, "iss": ISS, "aud": AUD}
    signing = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()) + b"." + b64(json.dumps(claims).encode())
    sig = hmac.new(secret.encode(), signing, hashlib.sha256).digest()
    return (signing + b"." + b64(sig)).decode()


def test_es256_token_and_api_keys_authenticate(server, ec_key):
    with server.client() as c:
        r = c.post("/v1/ask", json=ASK, headers=bearer(tok(alg="ES256", key=ec_key)))
        assert r.status_code == 200 and r.json()["refused"] is False
        # agent-1 is a Public guest: the HR leave policy is Internal, so it is never cited.
        r1 = c.post("/v1/ask", json=ASK, headers={"X-API-Key": "agent-key-1"})
        r2 = c.post("/v1/ask", json=ASK, headers={"X-API-Key": "agent-key-2"})
    assert r1.status_code == 200 and r2.status_code == 200
    assert "hr-leave" not in r1.text
    assert r2.json()["citations"][0]["doc_id"] == "hr-leave"


def test_principal_in_body_is_refused(server):
    body = {**ASK, "principal": {"user_id": "eval-board", "max_classification": "Restricted"}}
    with server.client() as c:
        r = c.post("/v1/ask", json=body, headers=bearer(tok(roles=["guest"], departments=[], clearance="Public")))
    problem = assert_problem(r, 422, "invalid-request")
    assert "principal" in problem["detail"]


# ---------------------------------------------------------------------------------------------- request ids, logs


def test_request_id_is_echoed_generated_and_in_every_log_line(server):
    with server.client() as c:
        r1 = c.post("/v1/ask", json=ASK, headers={**bearer(tok()), "X-Request-ID": "trace-abc.123"})
        r2 = c.get("/healthz")
        r3 = c.get("/healthz", headers={"X-Request-ID": "bad id with spaces"})
    assert r1.headers["x-request-id"] == "trace-abc.123" and r1.json()["request_id"] == "trace-abc.123"
    assert len(r2.headers["x-request-id"]) == 32
    assert r3.headers["x-request-id"] != "bad id with spaces" and len(r3.headers["x-request-id"]) == 32
    time.sleep(0.3)
    records = server.log_records()
    mine = [rec for rec in records if rec.get("request_id") == "trace-abc.123"]
    # The answer line written inside the route and the access line both carry the id.
    assert {rec["logger"] for rec in mine} >= {"ragbench.answer.service", "ragbench.serve.access"}
    access = [rec for rec in mine if rec["logger"] == "ragbench.serve.access"]
    assert access[0]["status"] == 200 and access[0]["route"] == "/v1/ask" and access[0]["principal"]
    assert not any("color_message" in rec for rec in records)  # uvicorn's terminal-escaped copy of msg is dropped
    # Log lines never hold the question or document text.
    assert not any("annual leave" in str(rec).lower() for rec in records)


def test_spans_around_retrieve_and_generate_reach_the_otlp_endpoint(server, otlp):
    with server.client() as c:
        r = c.post("/v1/ask", json=ASK, headers={**bearer(tok()), "X-Request-ID": "span-check-1"})
    assert r.status_code == 200
    assert r.json()["refused"] is False  # so the model was called: a generate span exists
    # Protobuf keeps strings as UTF-8: span names and the request id attribute can be found in the exports. The two
    # spans may leave in separate batches, so every batch naming this request is read.
    deadline = time.monotonic() + 30
    while True:
        mine = b"".join(b for b in list(otlp.bodies) if b"span-check-1" in b)
        if (b"rag.retrieve" in mine and b"rag.generate" in mine) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert b"rag.retrieve" in mine and b"rag.generate" in mine and b"ragbench-serve" in mine


# ---------------------------------------------------------------------------------------------- limits


def test_oversized_bodies_are_413(server):
    big = {"question": "x" * 5000}
    with server.client() as c:
        r1 = c.post("/v1/ask", json=big, headers=bearer(tok()))

        def chunks():
            for _ in range(10):
                yield b" " * 1000

        r2 = c.post("/v1/ask", content=chunks(), headers={**bearer(tok()), "Content-Type": "application/json"})
    assert_problem(r1, 413, "body-too-large")
    body = assert_problem(r2, 413, "body-too-large")
    assert "4096" in body["detail"]


def test_rate_limit_per_principal(server):
    who = tok("rate-limited-user")
    other = tok("someone-else-entirely")
    with server.client() as c:
        codes = [c.get("/v1/search", params={"q": "leave"}, headers=bearer(who)).status_code for _ in range(RATE)]
        r = c.get("/v1/search", params={"q": "leave"}, headers=bearer(who))
        r_other = c.get("/v1/search", params={"q": "leave"}, headers=bearer(other))
        metrics = c.get("/metrics").text
    assert codes == [200] * RATE
    body = assert_problem(r, 429, "rate-limited")
    assert 1 <= int(r.headers["retry-after"]) <= 60 // RATE + 1
    assert f"{RATE} requests per minute" in body["detail"]
    assert r_other.status_code == 200
    assert _metric(metrics, "ragbench_rate_limited_total") >= 1


def _metric(text: str, name: str, **labels: str) -> float:
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and all(f'{k}="{v}"' in line for k, v in labels.items()):
            head = line.split(" ")[0]
            if head == name or head.startswith(name + "{"):
                total += float(line.rsplit(" ", 1)[1])
    return total


def test_metrics_count_routes_statuses_and_refusals(server):
    with server.client() as c:
        before = c.get("/metrics").text
        c.post("/v1/ask", json=ASK)  # 401
        c.post("/v1/ask", json={"question": "What is the guest Wi-Fi password at the moon base?"},
               headers=bearer(tok()))
        after = c.get("/metrics").text
    assert (_metric(after, "ragbench_http_requests_total", route="/v1/ask", status="401")
            - _metric(before, "ragbench_http_requests_total", route="/v1/ask", status="401")) == 1
    assert _metric(after, "ragbench_refusals_total") - _metric(before, "ragbench_refusals_total") == 1
    assert _metric(after, "ragbench_http_request_duration_seconds_count", route="/v1/ask") >= 2
    assert "ragbench_http_request_duration_seconds_bucket" in after


def _series(text: str, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """Every labelled sample of counter ``name`` in a /metrics text: sorted (label, value) pairs → value."""
    out = {}
    for line in text.splitlines():
        if line.startswith(name + "{"):
            head, value = line.rsplit(" ", 1)
            labels = head[len(name) + 1:-1]
            out[tuple(sorted((k, v) for k, v in (part.split("=", 1) for part in labels.split(","))))] = float(value)
    return out


def _added(before: str, after: str, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    old, new = _series(before, name), _series(after, name)
    return {key: value - old.get(key, 0.0) for key, value in new.items() if value != old.get(key, 0.0)}


def _answers(decided_by: str, refused: str) -> tuple[tuple[str, str], ...]:
    return (("decided_by", f'"{decided_by}"'), ("refused", f'"{refused}"'))


def test_metrics_count_answers_by_the_rule_that_decided_them(server):
    staff, guest = tok(), tok(roles=["guest"], departments=[], clearance="Public")
    with server.client() as c:
        before = c.get("/metrics").text
        answered = c.post("/v1/ask", json=ASK, headers=bearer(staff))
        refused = c.post("/v1/ask", json={"question": "What is the guest Wi-Fi password at the moon base?"},
                         headers=bearer(staff))
        gap = c.post("/v1/ask", json=ASK, headers=bearer(guest))  # the leave policy is internal
        sid = c.post("/v1/chat/sessions", headers=bearer(staff)).json()["session_id"]
        chat = c.post(f"/v1/chat/sessions/{sid}/messages", json=ASK, headers=bearer(staff))
        after = c.get("/metrics").text
    assert [r.status_code for r in (answered, refused, gap, chat)] == [200] * 4
    assert [r.json()["refused"] for r in (answered, refused, gap, chat)] == [False, True, True, False]
    # One count per answering request, /v1/ask and chat alike, by the rule that decided it.
    assert _added(before, after, "ragbench_answers_total") == {
        _answers("check:coverage", "false"): 2.0, _answers("check:unknown-word", "true"): 1.0,
        _answers("restricted-gap", "true"): 1.0}
    assert _added(before, after, "ragbench_refusals_total") == {
        (("reason", '"unanswerable-question"'),): 1.0, (("reason", '"insufficient-retrieval"'),): 1.0}
    # The body never names the rule: the restricted-gap refusal reads like a weak retrieval.
    assert gap.json()["refusal_reason"] == "insufficient-retrieval"
    assert all("decided_by" not in r.json() for r in (answered, refused, gap, chat))


def test_health_and_readiness(server):
    with server.client() as c:
        assert c.get("/healthz").json() == {"status": "ok"}
        ready = c.get("/readyz").json()
        missing = c.get("/v1/nothing-here")
    assert ready["status"] == "ready" and ready["retriever"] == "bm25" and ready["chunks"] > 0
    assert_problem(missing, 404, "not-found")


# ---------------------------------------------------------------------------------------------- sessions, feedback


def test_chat_session_belongs_to_its_owner(server):
    alice, bob = tok("alice-chat"), tok("bob-chat")
    with server.client() as c:
        sid = c.post("/v1/chat/sessions", headers=bearer(alice)).json()["session_id"]
        first = c.post(f"/v1/chat/sessions/{sid}/messages", json=ASK, headers=bearer(alice))
        follow = c.post(f"/v1/chat/sessions/{sid}/messages", json={"question": "What about sick leave?"},
                        headers=bearer(alice))
        bob_msg = c.post(f"/v1/chat/sessions/{sid}/messages", json=ASK, headers=bearer(bob))
        bob_read = c.get(f"/v1/chat/sessions/{sid}", headers=bearer(bob))
        history = c.get(f"/v1/chat/sessions/{sid}", headers=bearer(alice))
        unknown = c.post(f"/v1/chat/sessions/{uuid.uuid4().hex}/messages", json=ASK, headers=bearer(alice))
    assert first.status_code == 200 and first.json()["turn"] == 1
    assert follow.status_code == 200 and follow.json()["turn"] == 2
    assert follow.json()["citations"][0]["doc_id"] == "hr-leave"
    assert_problem(bob_msg, 404, "not-found")
    assert_problem(bob_read, 404, "not-found")
    assert_problem(unknown, 404, "not-found")
    msgs = history.json()["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant"]
    assert msgs[2]["content"] == "What about sick leave?"  # the original question, not the rewrite


def test_feedback_only_on_own_answers(server):
    alice, bob = tok("alice-fb"), tok("bob-fb")
    with server.client() as c:
        answer_id = c.post("/v1/ask", json=ASK, headers=bearer(alice)).json()["answer_id"]
        ok = c.post("/v1/feedback", json={"answer_id": answer_id, "rating": 5, "comment": "clear"},
                    headers=bearer(alice))
        other = c.post("/v1/feedback", json={"answer_id": answer_id, "rating": 1}, headers=bearer(bob))
        bad = c.post("/v1/feedback", json={"answer_id": answer_id, "rating": 9}, headers=bearer(alice))
    assert ok.status_code == 201 and ok.json()["rating"] == 5
    assert_problem(other, 404, "not-found")
    assert_problem(bad, 422, "invalid-request")


def test_search_hits_respect_acls(server):
    with server.client() as c:
        staff = c.get("/v1/search", params={"q": "annual leave days", "k": 5}, headers=bearer(tok()))
        guest = c.get("/v1/search", params={"q": "annual leave days", "k": 5},
                      headers=bearer(tok(roles=["guest"], departments=[], clearance="Public")))
    assert staff.json()["hits"][0]["doc_id"] == "hr-leave"
    assert all(h["doc_id"] != "hr-leave" for h in guest.json()["hits"])


def test_search_hands_agents_quarantined_text(server):
    """The public forum thread's injected reply is redacted from /v1/search hits, as before the service's reader."""
    guest = tok("agent-q", roles=["guest"], departments=[], clearance="Public")
    with server.client() as c:
        r = c.get("/v1/search", params={"q": "Tern monitor readings drift upward forum", "k": 5},
                  headers=bearer(guest))
    hits = {h["doc_id"]: h for h in r.json()["hits"]}
    forum = hits["pub-forum-thread"]
    assert forum["quarantined"] is True and "[quarantined]" in forum["text"]
    assert "ignore previous instructions" not in r.text and "developer mode" not in r.text
    assert "moderators will never ask for passwords" in forum["text"]
    assert all(h["quarantined"] is False for d, h in hits.items() if d != "pub-forum-thread")


def test_page_is_served_with_a_strict_policy(server):
    with server.client() as c:
        page, script = c.get("/"), c.get("/page.js")
    assert page.status_code == 200 and 'id="token"' in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert "textContent" in script.text and "innerHTML" not in script.text


# ---------------------------------------------------------------------------------------------- EE-RAG


def test_eerag_conversation_replies_with_elected_ids_and_tags_for_its_owner_only(server):
    alice, bob = tok("alice-eerag"), tok("bob-eerag")
    with server.client() as c:
        cid = c.post("/v1/eerag/conversations", headers=bearer(alice)).json()["conversation_id"]
        first = c.post(f"/v1/eerag/conversations/{cid}/messages",
                       json={"text": "How many days of annual leave do full-time employees get?"},
                       headers=bearer(alice))
        second = c.post(f"/v1/eerag/conversations/{cid}/messages", json={"text": "And can I carry days over?"},
                        headers=bearer(alice))
        bob_msg = c.post(f"/v1/eerag/conversations/{cid}/messages", json={"text": "hi"}, headers=bearer(bob))
        bob_read = c.get(f"/v1/eerag/conversations/{cid}", headers=bearer(bob))
        history = c.get(f"/v1/eerag/conversations/{cid}", headers=bearer(alice))
        claimed = c.post("/v1/eerag/conversations/my-own-id/messages", json={"text": "hello"},
                         headers=bearer(bob))
        stolen = c.post("/v1/eerag/conversations/my-own-id/messages", json={"text": "hello"},
                        headers=bearer(alice))
        bad_id = c.post("/v1/eerag/conversations/a:b/messages", json={"text": "hello"}, headers=bearer(alice))
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["election_status"] in ("elected", "declined")
    assert len(body["tags"]) == len(body["elected_ids"])
    assert all(f"[RAG:{t}]" in body["reply"] for t in body["tags"])
    assert second.status_code == 200 and second.json()["turn_id"] == f"{cid}:2"
    assert_problem(bob_msg, 404, "not-found")
    assert_problem(bob_read, 404, "not-found")
    msgs = history.json()["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant"]
    assert msgs[2]["content"] == "And can I carry days over?" and len(history.json()["audit"]) == 2
    assert claimed.status_code == 200
    assert_problem(stolen, 404, "not-found")
    assert_problem(bad_id, 422, "invalid-request")


def test_eerag_memory_is_never_an_answer_for_someone_else(server):
    secret = "my locker code is 4471-zebra-quartz"
    with server.client() as c:
        cid = c.post("/v1/eerag/conversations", headers=bearer(tok("owner-mem"))).json()["conversation_id"]
        assert c.post(f"/v1/eerag/conversations/{cid}/messages", json={"text": f"Remember: {secret}."},
                      headers=bearer(tok("owner-mem"))).status_code == 200
        other = tok("other-mem", roles=["guest"], departments=[], clearance="Public")
        # hybrid is used by no other test here: its index is built now, after the memory was stored.
        hits = c.get("/v1/search", params={"q": "locker code zebra quartz", "k": 10, "retriever": "hybrid"},
                     headers=bearer(other))
        ask = c.post("/v1/ask", json={"question": "What is the locker code zebra quartz?", "retriever": "hybrid"},
                     headers=bearer(other))
    assert hits.status_code == 200 and ask.status_code == 200
    assert "4471" not in hits.text and "4471" not in ask.text
    assert all(not h["doc_id"].startswith("memory:") for h in hits.json()["hits"])


# ---------------------------------------------------------------------------------------------- research


def test_research_job_lifecycle_feeds_the_hub_search(server):
    owner, other = tok("researcher"), tok("nosy")
    with server.client() as c:
        assert c.get("/search/health").json()["entries"] == 0
        r = c.post("/v1/research", json={"question": "How does GraphQL compare to REST for mobile apps?",
                                         "max_passes": 2}, headers=bearer(owner))
        assert r.status_code == 202, r.text
        job = r.json()
        assert job["status"] in ("queued", "running") and r.headers["location"] == f"/v1/research/{job['job_id']}"
        assert_problem(c.get(r.headers["location"], headers=bearer(other)), 404, "not-found")
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            state = c.get(r.headers["location"], headers=bearer(owner)).json()
            if state["status"] in ("done", "failed"):
                break
            time.sleep(0.5)
        assert state["status"] == "done", state
        report = state["report"]
        assert report["passes_completed"] <= 2 and report["sources_used"] > 0
        assert len(report["sub_topics"]) == 5
        health = c.get("/search/health").json()
        hits = c.post("/search/query", json={"query": "GraphQL bandwidth mobile", "k": 5}, headers=bearer(owner))
        tier1 = c.post("/search/query", json={"query": "GraphQL bandwidth mobile", "k": 5, "min_tier": 1},
                       headers=bearer(owner))
        credible = c.post("/search/query", json={"query": "GraphQL", "k": 50, "min_credibility": 0.7},
                          headers=bearer(owner))
        anonymous = c.post("/search/query", json={"query": "GraphQL"})
    assert health["entries"] == health["indexed"] > 0 and health["retrievers"] == ["bm25", "dense"]
    results = hits.json()["results"]
    assert len(results) == 5
    assert set(results[0]) >= {"entry_id", "topic", "text", "url", "tier", "credibility", "retrieved_at"}
    assert "graphql" in (results[0]["title"] + results[0]["text"]).lower()
    assert tier1.json()["results"] and all(x["tier"] == 1 for x in tier1.json()["results"])
    assert credible.json()["results"] and all(x["credibility"] >= 0.7 for x in credible.json()["results"])
    assert_problem(anonymous, 401, "unauthorized")
