"""No document beyond the caller's claims ever appears in a reply, a citation, a search hit or an error — over
random claims (hypothesis) and with mixed principals in parallel, against a real ``ragbench serve`` process."""
from __future__ import annotations

import json
import random
import sqlite3
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ragbench.eval.answers import LeakChecker
from ragbench.eval.golden import load_golden
from ragbench.schema import Principal

from .helpers import FAST, Server, bearer, token

GOLDEN = load_golden()
CHECK = LeakChecker(GOLDEN)
ROLES = sorted({r for d in GOLDEN.documents for r in d.acl.roles} | {"admin", "Employee"})
DEPTS = sorted({x for d in GOLDEN.documents for x in d.acl.departments} | {"nowhere"})
LEVELS = ["Public", "Internal", "Confidential", "Restricted"]
QUESTIONS = [q.question for q in GOLDEN.questions]
MODES = ["bm25", "dense", "hybrid", "lsh"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve-leaks")
    with Server(tmp, ["--retriever", "dense", "--rate-limit", "0", *FAST]) as s:
        yield s


def principal_of(sub: str, roles: list[str], departments: list[str], clearance: str) -> Principal:
    return Principal.make(sub, roles, departments, clearance)


def docs_of(server: Server, chunk_ids: list[str]) -> list[str]:
    """Documents of elected chunk ids, read from the server's store (read-only; WAL allows it while it runs)."""
    if not chunk_ids:
        return []
    path = next(server.workdir.glob(".ragbench/serve-*.db"))
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        rows = conn.execute(f"SELECT chunk_id, doc_id FROM chunks WHERE chunk_id IN ({','.join('?' * len(chunk_ids))})",
                            chunk_ids).fetchall()
    found = dict(rows)
    # Memory chunks are this conversation's own turns; every other elected id must be a chunk of the store.
    assert all(c in found or c.startswith("memory:") for c in chunk_ids), chunk_ids
    return [found[c] for c in chunk_ids if c in found]


def leaks(who: Principal, text: str, doc_ids: list[str]) -> list[str]:
    forbidden = set(CHECK.forbidden(who))
    return sorted(set(CHECK.leaks(who, text)) | (set(doc_ids) & forbidden))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(roles=st.lists(st.sampled_from(ROLES), max_size=3, unique=True),
       departments=st.lists(st.sampled_from(DEPTS), max_size=3, unique=True),
       clearance=st.sampled_from(LEVELS), question=st.sampled_from(QUESTIONS), mode=st.sampled_from(MODES),
       k=st.integers(min_value=1, max_value=8))
def test_random_claims_never_see_forbidden_documents(server, roles, departments, clearance, question, mode, k):
    who = principal_of("prop-user", roles, departments, clearance)
    headers = bearer(token("prop-user", roles, departments, clearance))
    with server.client() as c:
        ask = c.post("/v1/ask", json={"question": question, "retriever": mode, "k": k}, headers=headers)
        hits = c.get("/v1/search", params={"q": question, "k": 10, "retriever": mode}, headers=headers)
        error = c.post("/v1/ask", json={"question": question, "k": 10_000}, headers=headers)
        cid = c.post("/v1/eerag/conversations", headers=headers).json()["conversation_id"]
        eerag = c.post(f"/v1/eerag/conversations/{cid}/messages", json={"text": question}, headers=headers)
    assert ask.status_code == 200 and hits.status_code == 200 and error.status_code == 422
    assert eerag.status_code == 200, eerag.text
    assert leaks(who, eerag.text, docs_of(server, eerag.json()["elected_ids"])) == []
    cited = [x["doc_id"] for x in ask.json()["citations"]]
    hit_docs = [h["doc_id"] for h in hits.json()["hits"]]
    assert leaks(who, ask.text, cited) == []
    # The echoed query is the caller's own text (a question may quote a forbidden document), so it is left out.
    listed = json.dumps({key: v for key, v in hits.json().items() if key != "query"}, ensure_ascii=False)
    assert leaks(who, listed, hit_docs) == []
    assert leaks(who, error.text, []) == []


def test_mixed_principals_in_parallel_leak_nothing_and_match_sequential(server):
    rng = random.Random(7)
    jobs = [(pid, q.question) for q in GOLDEN.questions for pid in rng.sample(sorted(GOLDEN.principals), 2)]
    tokens = {pid: token(pid, sorted(p.roles), sorted(p.departments), p.max_classification.name.title())
              for pid, p in GOLDEN.principals.items()}

    def ask(job):
        pid, question = job
        with server.client() as c:
            r = c.post("/v1/ask", json={"question": question}, headers=bearer(tokens[pid]))
        return pid, question, r

    with ThreadPoolExecutor(max_workers=16) as pool:
        parallel = list(pool.map(ask, jobs))
    leaked = []
    for pid, _, r in parallel:
        assert r.status_code == 200, r.text
        leaked += leaks(GOLDEN.principals[pid], r.text, [x["doc_id"] for x in r.json()["citations"]])
    assert len(parallel) == 2 * len(GOLDEN.questions) and leaked == []
    # Concurrency changes nothing: a sample asked again one at a time gives the same answers and citations.
    for pid, question, r in rng.sample(parallel, 20):
        _, _, again = ask((pid, question))
        a, b = r.json(), again.json()
        assert (a["answer"], a["refusal_reason"], a["citations"]) == (b["answer"], b["refusal_reason"], b["citations"])


def test_a_restricted_gap_refusal_is_not_told_apart_in_the_body_or_the_metrics(server):
    guest = bearer(token("leak-guest", ["guest"], [], "Public"))
    with server.client() as c:
        r = c.post("/v1/ask", json={"question": "How many days of annual leave do full-time employees get?"},
                   headers=guest)
        metrics = c.get("/metrics").text
    assert r.status_code == 200 and r.json()["refused"] is True
    assert r.json()["refusal_reason"] == "insufficient-retrieval" and "decided_by" not in r.json()
    # /metrics needs no credentials: the rule that decided is counted only with serve.decided_by_metrics on.
    assert "decided_by" not in metrics and "ragbench_answers_total" not in metrics
    assert 'ragbench_refusals_total{reason="insufficient-retrieval"}' in metrics
