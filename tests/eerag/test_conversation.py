"""The conversation system: memory, DCS, electors, digestion, failed elections, audit and restart."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ragbench.config import RagbenchConfig, with_overrides
from ragbench.eerag.conversation import Conversation, conversation_audit
from ragbench.eerag.digest import DIGEST_OPEN
from ragbench.eerag.pipeline import FAILED_REPLY
from ragbench.eerag.prompts import BUILTIN
from ragbench.errors import ConfigError
from ragbench.llm.prompts import PromptRegistry
from ragbench.llm.recording import RecordingChatModel
from ragbench.retrieval.chunking import WholeDocumentChunker
from ragbench.retrieval.embedding import HashingEmbedder
from ragbench.store import KnowledgeStore

from .conftest import DOCS, ScriptedModel

ROOT = Path(__file__).resolve().parents[2]


def cfg(**over):
    base = {"retrieval.mode": "bm25", "eerag.elect_threshold": 0.0}
    return with_overrides(RagbenchConfig(), {**base, **{k.replace("__", "."): v for k, v in over.items()}})


@pytest.fixture()
def store(tmp_path):
    s = KnowledgeStore.open(tmp_path / "kb.db")
    s.ingest(DOCS, WholeDocumentChunker(), HashingEmbedder(64), summarizer=lambda c: "summary of " + c.doc_id)
    yield s
    s.close()


def test_turns_become_memory_and_memory_is_a_candidate(store):
    emb = HashingEmbedder(64)
    conv = Conversation.open(store, "c1", cfg(), None, emb)
    first = conv.send("how do I rebase a git branch")
    assert first.election_status == "elected" and first.reply.endswith(f"[RAG:{first.tags[0]}]")
    assert [t.role for t in conv.memory.turns()] == ["user", "assistant"]
    assert [t.doc_id for t in conv.memory.turns()] == ["memory:c1:000000", "memory:c1:000001"]
    second = conv.send("rebase the git branch again")
    docs = [store.get_chunk(c).doc_id for c in second.surfaced_ids]
    assert "memory:c1:000000" in docs and "git-rebase" in docs  # documents and memory in one header
    # Another conversation never sees c1's memory.
    other = Conversation.open(store, "c2", cfg(), None, emb).send("rebase the git branch again")
    assert not [c for c in other.surfaced_ids if store.get_chunk(c).doc_id.startswith("memory:c1")]


def test_resume_after_process_restart_keeps_memory_history_and_dcs(tmp_path):
    path = tmp_path / "kb.db"
    script = (
        "import json, sys\n"
        "from ragbench.config import RagbenchConfig, with_overrides\n"
        "from ragbench.eerag.conversation import Conversation\n"
        "from ragbench.retrieval.chunking import WholeDocumentChunker\n"
        "from ragbench.retrieval.embedding import HashingEmbedder\n"
        "from ragbench.schema import Document\n"
        "from ragbench.store import KnowledgeStore\n"
        "s = KnowledgeStore.open(sys.argv[1])\n"
        "s.ingest([Document('d1', 'The backend API returns a 500 error after the deploy.')], "
        "WholeDocumentChunker(), HashingEmbedder(64))\n"
        "c = Conversation.open(s, 'chat', with_overrides(RagbenchConfig(), {'retrieval.mode': 'bm25', "
        "'eerag.dcs': True}), None, HashingEmbedder(64))\n"
        "c.send('The backend API returns a 500 error after the deploy')\n"
        "c.send('Please fix the failing database migration on the server')\n"
        "print(json.dumps(sorted(c.selector.assembler._messages)))\n")
    out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert out.returncode == 0, out.stderr
    dcs_ids = json.loads(out.stdout.strip().splitlines()[-1])
    with KnowledgeStore.open(path) as s:
        c = Conversation.open(s, "chat", cfg(eerag__dcs=True), None, HashingEmbedder(64))
        assert [m.content for m in c.history()][::2] == ["The backend API returns a 500 error after the deploy",
                                                         "Please fix the failing database migration on the server"]
        assert sorted(c.selector.assembler._messages) == dcs_ids == [f"memory:chat:00000{i}" for i in range(4)]
        before = c.selector.relevant_ids("fix the backend error")
        c.send("fix the backend error")
        assert len(c.memory) == 6 and c.history()[-2].content == "fix the backend error"
        assert len(conversation_audit(s, "chat")) == 3  # the audit survived the restart too
        assert before  # DCS state was there to match the new message


def test_dcs_boost_changes_the_elected_set(store):
    emb = HashingEmbedder(64)
    elected = {}
    for dcs in (False, True):
        conv = Conversation.open(store, f"dcs-{dcs}", cfg(eerag__dcs=dcs, eerag__elector="llm", eerag__top_k=2,
                                                         eerag__candidate_k=8),
                                 ScriptedModel(["RETRIEVE 1", "ok"]), emb)
        conv.remember("user", "The backend API returns a 500 error after the deploy")
        conv.remember("user", "Write a CSS layout for the frontend page")
        elected[dcs] = [store.get_chunk(c).doc_id for c in conv.send("fix the backend error, git rebase").elected_ids]
    assert elected[False] == ["git-rebase"]          # BM25's best hit shown first
    assert elected[True] == ["memory:dcs-True:000000"]  # DCS moved the related earlier turn to the front


def test_digest_llm_reaches_the_digester_and_is_never_silently_truncation(store):
    emb = HashingEmbedder(64)
    with pytest.raises(ConfigError, match="eerag.digest=llm needs a chat model"):
        Conversation.open(store, "x", cfg(eerag__silent=True, eerag__digest="llm"), None, emb)
    with pytest.raises(ConfigError, match="eerag.digest must be one of"):
        Conversation.open(store, "x", cfg(eerag__digest="gpt"), None, emb)
    model = RecordingChatModel(ScriptedModel(["RETRIEVE 1", "Fetch, then rebase.", "Use git rebase."]))
    conv = Conversation.open(store, "d", cfg(eerag__silent=True, eerag__digest="llm", eerag__elector="llm"), model,
                             emb)
    res = conv.send("how do I rebase with git")
    assert res.model_calls == 3 and res.prompts["digest"] == "eerag.digest@v1"
    digest_call = model.calls[1]
    assert digest_call[0].content == BUILTIN["eerag.digest@v1"].replace("{n}", "80")
    assert "git rebase origin/main" in digest_call[1].content  # the elected chunk went to the digester
    assert model.calls[2][-2].content == f"{DIGEST_OPEN}\nFetch, then rebase.\n---"
    assert res.answer == "Use git rebase."


def test_llm_elector_through_a_recording_model_uses_the_registered_prompt(store):
    model = RecordingChatModel(ScriptedModel(["RETRIEVE 2", "Named volumes."]))
    conv = Conversation.open(store, "e", cfg(eerag__elector="llm", eerag__elect_prompt="eerag.elect@v2"), model,
                             HashingEmbedder(64))
    res = conv.send("docker volumes and git rebase")
    header = model.calls[0][1].content
    second_line = [ln for ln in header.splitlines() if ln.startswith("[ID:2]")][0]
    assert model.calls[0][0].content == BUILTIN["eerag.elect@v2"]
    assert res.elected_ids == [res.surfaced_ids[1]] and second_line.endswith(
        "summary of " + store.get_chunk(res.elected_ids[0]).doc_id)
    assert PromptRegistry(store).get("eerag", "v2") is None
    assert PromptRegistry(store).get("eerag.elect", "v2").body == BUILTIN["eerag.elect@v2"]
    assert res.prompts["elect"] == "eerag.elect@v2" and res.model_id == "scripted"


@pytest.mark.parametrize("reply, failure", [
    ("", "empty reply"),
    ("RETRIEVE 99", "only unshown ids [99]"),
    ("RETRIEVE please!", "RETRIEVE without a valid id"),
])
def test_failed_election_is_recorded_and_the_conversation_goes_on(store, reply, failure):
    model = ScriptedModel([reply, "I know this one."])
    conv = Conversation.open(store, "f", cfg(eerag__elector="llm"), model, HashingEmbedder(64))
    res = conv.send("how do I rebase with git")
    assert (res.election_status, res.failure, res.model_calls) == ("failed", failure, 1)
    assert res.reply == FAILED_REPLY and res.elected_ids == [] and res.tags == []
    row = conversation_audit(store, "f")[0]
    assert (row["election_status"], row["failure"], row["elected"]) == ("failed", failure, [])
    nxt = conv.send("thanks")
    assert nxt.election_status == "declined" and nxt.reply == "I know this one."
    # The garbage reply never reaches a later prompt.
    assert all(m.content != reply or not reply for m in model.prompts[-1])


def test_llm_elector_needs_a_model(store):
    with pytest.raises(ConfigError, match="eerag.elector=llm needs a chat model"):
        Conversation.open(store, "g", cfg(eerag__elector="llm"), None, HashingEmbedder(64))
    with pytest.raises(ConfigError, match="eerag.elector must be one of"):
        Conversation.open(store, "g", cfg(eerag__elector="oracle"), None, HashingEmbedder(64))


def test_policy_elects_and_the_chat_model_answers(store):
    model = RecordingChatModel(ScriptedModel(["From the context: rebase.", "Directly: hello."]))
    conv = Conversation.open(store, "p", cfg(), model, HashingEmbedder(64))
    res = conv.send("how do I rebase with git")
    assert res.election_status == "elected" and res.answer == "From the context: rebase."
    assert len(model.calls) == 1 and model.calls[0][-2].content.startswith("--- Retrieved Context")
    strict = Conversation.open(store, "p2", cfg(eerag__elect_threshold=0.99), model, HashingEmbedder(64))
    res = strict.send("hello there")
    assert (res.election_status, res.answer, res.model_calls) == ("declined", "Directly: hello.", 1)
    assert all(not m.content.startswith("--- Potentially") for m in model.calls[1])  # header withheld


def test_memory_documents_fail_every_acl_check_outside_their_conversation(store):
    """Conversation memory shares the store with the documents: an ACL-aware retriever over the whole store must
    never return it, even to a principal cleared for Restricted with every role."""
    from ragbench.retrieval.factory import make_retriever
    from ragbench.schema import Principal

    emb = HashingEmbedder(64)
    conv = Conversation.open(store, "c1", cfg(), None, emb)
    conv.send("how do I rebase a git branch")
    assert store.acls()["memory:c1:000000"].classification.name == "RESTRICTED"
    retriever = make_retriever("bm25", RagbenchConfig(), emb)
    retriever.index(store.chunks(), store.acls(), store.titles())
    boss = Principal.make("boss", roles=["admin", "employee", "eerag-memory"], departments=["it"],
                          max_classification="Restricted")
    docs = [h.doc_id for h in retriever.search("how do I rebase a git branch", k=50, principal=boss)]
    assert "git-rebase" in docs and not [d for d in docs if d.startswith("memory:")]
    unrestricted = [h.doc_id for h in retriever.search("how do I rebase a git branch", k=50, principal=None)]
    assert "memory:c1:000000" in unrestricted  # the offline, ACL-free caller still sees everything
