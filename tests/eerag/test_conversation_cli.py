"""``ragbench eerag chat`` and ``ragbench eerag audit``."""
from __future__ import annotations

import io
import json

from ragbench.cli import main
from ragbench.retrieval.chunking import WholeDocumentChunker
from ragbench.retrieval.embedding import HashingEmbedder
from ragbench.store import KnowledgeStore

from .conftest import DOCS

FAST = ["--retriever", "bm25", "--set", "embedding.model=hashing", "--set", "eerag.elect_threshold=0.0"]


def test_chat_then_resume_then_audit(tmp_path, monkeypatch, capsys):
    path = tmp_path / "kb.db"
    with KnowledgeStore.open(path) as s:
        s.ingest(DOCS, WholeDocumentChunker(), HashingEmbedder(384), summarizer=lambda c: "summary of " + c.doc_id)
    monkeypatch.setattr("sys.stdin", io.StringIO("how do I rebase with git\n\n"))
    assert main(["eerag", "chat", "--store", str(path), "--conversation", "t1", *FAST]) == 0
    out = capsys.readouterr()
    lines = out.out.strip().splitlines()
    assert lines[0].startswith("Rebase a feature branch") and "[RAG:" in lines[0]
    assert lines[1].startswith("  [elected] elected ['git-rebase']")
    assert "resume with --conversation t1" in out.err
    monkeypatch.setattr("sys.stdin", io.StringIO("docker volumes\n"))
    assert main(["eerag", "chat", "--store", str(path), "--conversation", "t1", "--json", *FAST]) == 0
    turn = json.loads(capsys.readouterr().out)
    assert turn["request_id"] == "t1:2" and turn["election_status"] == "elected"
    assert main(["eerag", "audit", "--store", str(path), "--conversation", "t1", "--json"]) == 0
    audit = json.loads(capsys.readouterr().out)
    assert [r["request_id"] for r in audit["turns"]] == ["t1:0", "t1:2"]
    assert audit["turns"][1]["tags"] == turn["tags"] and audit["turns"][0]["surfaced"][0][2] == "git-rebase"
    assert main(["eerag", "audit", "--store", str(path), "--conversation", "t1"]) == 0
    table = capsys.readouterr().out
    assert "t1:0  elected" in table and "Q: how do I rebase with git" in table
    assert main(["eerag", "audit", "--store", str(path), "--conversation", "nope"]) != 0
    assert "no EE-RAG conversation 'nope'" in capsys.readouterr().err


def test_chat_as_a_user_never_shows_documents_the_acl_withholds(tmp_path, monkeypatch, capsys):
    from ragbench.schema import Acl, Document

    path = tmp_path / "kb.db"
    pay = Document("pay-bands", "Band 3 pays 40,000 a year; rebase your pay expectations each April.", "Pay bands",
                   acl=Acl.make(["employee"], ["hr"], "Confidential"))
    with KnowledgeStore.open(path) as s:
        s.ingest([*DOCS, pay], WholeDocumentChunker(), HashingEmbedder(384), summarizer=lambda c: c.text)
    question = "rebase pay bands\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(question))
    assert main(["eerag", "chat", "--store", str(path), "--conversation", "hr", "--json", "--user", "ann",
                 "--roles", "employee", "--departments", "hr", "--classification", "Confidential", *FAST]) == 0
    assert "pay-bands" in json.loads(capsys.readouterr().out)["elected_docs"]
    monkeypatch.setattr("sys.stdin", io.StringIO(question))
    assert main(["eerag", "chat", "--store", str(path), "--conversation", "guest", "--json", "--user", "guest",
                 *FAST]) == 0
    out = capsys.readouterr().out
    turn = json.loads(out)
    assert "pay-bands" not in turn["elected_docs"] and "40,000" not in out
