"""Unit tests of the serve parts that need no server: token buckets (in process and shared by processes), claims →
principal, settings."""
from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from .helpers import SECRET, token  # first: skips the module when the serve extra is missing

from ragbench.errors import ConfigError, StoreError
from ragbench.schema import Classification
from ragbench.serve.auth import Authenticator, AuthError, principal_from_claims
from ragbench.serve.ratelimit import RateLimiter, SharedRateLimiter, make_limiter
from ragbench.serve.settings import ServeSettings, load_settings


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


@pytest.mark.parametrize("shared", [False, True], ids=["in-process", "shared-file"])
def test_token_bucket_refills_at_n_per_minute(shared, tmp_path):
    clock = Clock()
    # one token every 10 s; the shared bucket file behaves exactly as the in-process one
    limiter = SharedRateLimiter(tmp_path / "kb.ratelimit.db", 6, clock=clock) if shared else RateLimiter(6, clock=clock)
    assert [limiter.allow("a")[0] for _ in range(6)] == [True] * 6
    assert limiter.allow("a") == (False, 10)
    assert limiter.allow("b") == (True, 0)  # buckets are per principal
    clock.t += 4.0
    assert limiter.allow("a") == (False, 6)
    clock.t += 6.0
    assert limiter.allow("a") == (True, 0)
    assert limiter.allow("a") == (False, 10)


def test_rate_limit_zero_is_off_and_keys_are_bounded():
    assert RateLimiter(0).allow("x") == (True, 0)
    limiter = RateLimiter(1, max_keys=2, clock=Clock())
    for key in ("a", "b", "c"):
        assert limiter.allow(key) == (True, 0)
    assert len(limiter._buckets) == 2


def _hammer(path: str, ready, go, out, tries: int) -> None:
    """One process spending a shared bucket as fast as it can (the clock stands still: no refill)."""
    limiter = SharedRateLimiter(path, 300, clock=lambda: 1_000.0)
    limiter.allow(f"warm-{multiprocessing.current_process().name}")  # connected before the start signal
    ready.release()
    go.wait()
    out.put(sum(limiter.allow("p")[0] for _ in range(tries)))


def test_two_processes_hammering_one_bucket_get_exactly_its_capacity(tmp_path):
    ctx = multiprocessing.get_context("fork")
    ready, go, out = ctx.Semaphore(0), ctx.Event(), ctx.Queue()
    path = str(tmp_path / "kb.ratelimit.db")
    procs = [ctx.Process(target=_hammer, args=(path, ready, go, out, 300), name=f"hammer-{i}") for i in range(2)]
    for p in procs:
        p.start()
    for _ in procs:
        assert ready.acquire(timeout=60)
    go.set()  # both spend at once: without the one-transaction read-modify-write, tokens get spent twice
    granted = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert sum(granted) == 300  # 600 tries, one bucket of 300
    assert [p.exitcode for p in procs] == [0, 0]


def test_shared_buckets_prune_full_rows_and_name_the_file_on_errors(tmp_path):
    clock = Clock()
    limiter = SharedRateLimiter(tmp_path / "kb.ratelimit.db", 60, clock=clock)
    assert limiter.allow("a") == (True, 0) and limiter.allow("b") == (True, 0)
    clock.t += 61.0  # both buckets are full again: their rows go at the next prune
    assert limiter.allow("c") == (True, 0)
    rows = sqlite3.connect(tmp_path / "kb.ratelimit.db").execute("SELECT key FROM buckets").fetchall()
    assert rows == [("c",)]
    assert SharedRateLimiter.path_for("runs/kb.db") == Path("runs/kb.ratelimit.db")
    assert isinstance(make_limiter("kb.db", 10), SharedRateLimiter)
    assert isinstance(make_limiter(":memory:", 10), RateLimiter) and make_limiter("kb.db", 0).allow("x") == (True, 0)
    (tmp_path / "folder.ratelimit.db").mkdir()
    broken = SharedRateLimiter(tmp_path / "folder.ratelimit.db", 10)
    with pytest.raises(StoreError, match=r"rate-limit file .*folder\.ratelimit\.db cannot be used .*Fix:"):
        broken.allow("a")


def test_claims_become_a_principal():
    p = principal_from_claims({"sub": "u1", "roles": ["Employee"], "departments": ["HR", "it"],
                               "clearance": "confidential", "exp": 1})
    assert (p.user_id, p.roles, p.departments, p.max_classification) == (
        "u1", frozenset({"employee"}), frozenset({"hr", "it"}), Classification.CONFIDENTIAL)
    for bad, message in ((dict(roles="admin"), "claim roles must be a list of strings."),
                         (dict(departments=[1]), "claim departments must be a list of strings."),
                         (dict(clearance="Secret"), "claim clearance must be one of Public, Internal, Confidential, "
                                                    "Restricted."),
                         (dict(sub=" "), "claim sub must be a non-empty string.")):
        claims = {"sub": "u1", "roles": [], "departments": [], "clearance": "Public", "exp": 1, **bad}
        with pytest.raises(AuthError) as err:
            principal_from_claims(claims)
        assert err.value.detail == message


def test_authenticator_setup_errors_and_alg_none():
    with pytest.raises(ConfigError, match="no way to authenticate"):
        Authenticator()
    with pytest.raises(ConfigError, match="shorter than 32 bytes"):
        Authenticator(secret="short")
    auth = Authenticator(secret=SECRET)
    assert auth.verify_token(token("bob", ["guest"], [], "Public")).user_id == "bob"
    with pytest.raises(AuthError, match="algorithm 'none' is not accepted"):
        auth.verify_token(token("bob", alg="none", key=""))
    with pytest.raises(AuthError, match="API keys are not enabled"):
        auth.authenticate(None, "some-key")


def test_settings_split_serve_and_research_names(tmp_path):
    cfg_file = tmp_path / "c.yaml"
    cfg_file.write_text("serve:\n  rate_limit_per_minute: 30\n  retriever: bm25\nbm25:\n  k1: 1.5\n")
    serve, cfg = load_settings(cfg_file, {"serve.port": "9000", "bm25.b": "0.5"}, {"rate_limit_per_minute": 7})
    assert (serve.rate_limit_per_minute, serve.port, serve.retriever) == (7, 9000, "bm25")
    assert (cfg.bm25.k1, cfg.bm25.b) == (1.5, 0.5)
    with pytest.raises(ConfigError, match="serve.nope"):
        load_settings(None, {"serve.nope": "1"}, {})
    s = ServeSettings(store="x.db", config_path=str(cfg_file), overrides={"answer.top_k": "3"})
    again = ServeSettings.from_env(s.to_env())
    assert again == s
    dense = again.research_config("dense")
    # The dense answer threshold, the file's BM25 k1 and the override all apply; the query cache is off.
    assert (dense.answer.min_retrieval_score, dense.bm25.k1, dense.answer.top_k, dense.embedding.cache) == (
        0.28, 1.5, 3, False)
    assert again.research_config("bm25").answer.min_retrieval_score == 0.02


def test_api_keys_file_errors_name_the_file_and_the_fix(tmp_path):
    from ragbench.serve.auth import load_api_keys

    binary = tmp_path / "keys.yaml"
    binary.write_bytes(b"\xff\xfe\x00api_keys")
    with pytest.raises(ConfigError, match=r"API keys file .*keys\.yaml is not UTF-8 text.*Fix:"):
        load_api_keys(binary)
    with pytest.raises(ConfigError, match=r"API keys file .*missing\.yaml does not exist\. Fix:"):
        load_api_keys(tmp_path / "missing.yaml")
    good = tmp_path / "good.yaml"
    good.write_text("api_keys:\n  k-123:\n    sub: agent\n    roles: [employee]\n    departments: [it]\n"
                    "    clearance: Internal\n", encoding="utf-8")
    (key,) = load_api_keys(good)
    assert (key.principal.user_id, key.principal.max_classification) == ("agent", Classification.INTERNAL)


def test_served_service_gets_the_configured_judge_and_reranker(tmp_path, monkeypatch):
    """answer.judge and answer.rerank reach /v1/ask's service (local models stubbed: they need make install-llm)."""
    import ragbench.serve.state as state_module
    from ragbench.serve.state import ServeState

    made: list[tuple[str, str]] = []

    class Scorer:
        model_id = "stub"

        def token_logprobs(self, prefix: str, target: str) -> list[float]:
            return [-1.0]

    def scorer(name: str):
        made.append(("rerank", name))
        return Scorer() if name else None

    real = state_module.make_chat_model

    def chat(name_or_cfg, **kw):
        if isinstance(name_or_cfg, str):
            made.append(("judge", name_or_cfg))
            return real("extractive")
        return real(name_or_cfg, **kw)

    monkeypatch.setattr(state_module, "make_token_scorer", scorer)
    monkeypatch.setattr(state_module, "make_chat_model", chat)
    on = ServeState(ServeSettings(store=str(tmp_path / "s.db"), options={"retriever": "bm25"},
                                  overrides={"answer.judge": "llama", "answer.rerank": "llama"}))
    svc = on.service()
    assert made == [("judge", "llama"), ("rerank", "llama")]
    assert svc.judge is not None and svc.reranker is not None and isinstance(svc.reranker.model, Scorer)
    off = ServeState(ServeSettings(store=str(tmp_path / "t.db"), options={"retriever": "bm25"})).service()
    assert off.judge is None and off.reranker is None


def test_serve_judge_sets_the_judge_profile_and_set_still_wins():
    from ragbench.cli import build_parser
    from ragbench.commands.serve import config_overrides

    parser = build_parser()
    args = parser.parse_args(["serve", "--judge", "llama", "--set", "answer.judge_min_yes=0.5"])
    assert config_overrides(args) == {"answer.judge": "llama", "answer.judge_mode": "verdict",
                                      "answer.judge_min_yes": "0.5", "answer.judge_min_yes_restricted": "0.45",
                                      "answer.answerability_min_coverage": "0.0",
                                      "answer.answerability_min_similarity": "0.0",
                                      "answer.answerability_type_coverage": "0.0"}
    assert config_overrides(parser.parse_args(["serve"])) == {}


def test_serve_rescue_sets_the_rescue_profile_and_not_with_judge():
    from ragbench.cli import build_parser
    from ragbench.commands.serve import config_overrides
    from ragbench.errors import ConfigError

    parser = build_parser()
    assert config_overrides(parser.parse_args(["serve", "--rescue", "llama"])) == {
        "answer.judge": "llama", "answer.judge_mode": "rescue", "answer.judge_min_yes": "0.35",
        "answer.judge_min_yes_restricted": "0.4", "answer.judge_rescue_rules": "type-off-topic"}
    # --set wins over the profile
    assert config_overrides(parser.parse_args(["serve", "--rescue", "llama", "--set", "answer.judge_rescue_rules=all"])
                            )["answer.judge_rescue_rules"] == "all"
    with pytest.raises(ConfigError, match="both --judge and --rescue"):
        config_overrides(parser.parse_args(["serve", "--judge", "llama", "--rescue", "llama"]))
